package robustness

import (
	"context"
	"net/http/httptest"
	"testing"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/mem"
	"nameservice.dev/nameservice/drivers/remote"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/server"
)

// serveMem runs ns serve's handler over a memory store on a loopback
// listener and returns its URL.
func serveMem(t *testing.T) string {
	t.Helper()
	return serveBackend(t, mem.NewStore().Open())
}

// serveBackend runs ns serve's handler over backend on a loopback listener
// and returns its URL.
func serveBackend(t *testing.T, backend driver.Driver) string {
	t.Helper()
	srv := server.New(nameservice.New(backend), server.Options{NoAuth: true})
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { _ = srv.Close(); hs.Close(); _ = backend.Close() })
	return hs.URL
}

// TestLinearizableRemote checks the http:// driver through a server.
func TestLinearizableRemote(t *testing.T) {
	t.Parallel()
	runChecked(t, remoteAt(serveMem(t)), workload(8), false)
}

// TestFaultsRemote runs the fault campaign through ns serve: the fault
// proxy stands between the http:// driver and the server, which runs over
// each backend. Requests are refused, cut off or answered 500 before or
// after the server ran them, and answers are lost while the chaos client
// (a client of the server, past the proxy) purges and creates records: the
// driver resends with its idempotency key, the server resolves the resend
// against the backend, and the history must stay linearizable.
func TestFaultsRemote(t *testing.T) {
	t.Parallel()
	backends := []struct {
		name string
		open func(t *testing.T) Opener
	}{
		{"Mem", func(*testing.T) Opener {
			s := mem.NewStore()
			return func(context.Context) (driver.Driver, error) { return s.Open(), nil }
		}},
		{"FS", func(t *testing.T) Opener { return fsOpener(t.TempDir(), jsonld.LayoutB) }},
		{"DynamoDB", func(t *testing.T) Opener { cfg := dynamoConfig(t); return dynamoAt(cfg)(cfg.Endpoint) }},
		{"DocstoreDynamoDB", func(t *testing.T) Opener { endpoint, at := docstoreDynamoDB(t); return at(endpoint) }},
		{"S3", func(t *testing.T) Opener { cfg := s3Config(t, jsonld.LayoutB); return s3At(cfg)(cfg.Endpoint) }},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			campaign(t, func(t *testing.T, seed uint64) {
				backend, err := b.open(t)(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				faultRun(t, seed, serveBackend(t, backend), remoteAt, rates(nil))
			})
		})
	}
}

// remoteAt opens http:// clients of the server at endpoint.
func remoteAt(endpoint string) Opener {
	return func(ctx context.Context) (driver.Driver, error) {
		return remote.Open(ctx, remote.Config{BaseURL: endpoint})
	}
}
