package robustness

import (
	"context"
	"net/http/httptest"
	"testing"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/dynamodb"
	"nameservice.dev/nameservice/drivers/mem"
	"nameservice.dev/nameservice/drivers/remote"
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

func remoteOpener(url string) Opener {
	return func(context.Context) (driver.Driver, error) {
		return remote.Open(context.Background(), remote.Config{BaseURL: url})
	}
}

// TestLinearizableRemote checks the http:// driver through a server.
func TestLinearizableRemote(t *testing.T) {
	t.Parallel()
	runChecked(t, remoteOpener(serveMem(t)), workload(8), false)
}

// TestFaultsRemote puts the fault proxy between the http:// driver and the
// server: requests are refused, cut off or answered 500 before or after the
// server ran them. The driver resends with its idempotency key; the history
// must stay linearizable.
func TestFaultsRemote(t *testing.T) {
	t.Parallel()
	p := startProxy(t, serveMem(t), 21, rates(nil))
	runChecked(t, remoteOpener(p.URL()), faultWorkload(9, p), true)
	requireFaults(t, p)
}

// TestFaultsRemoteDynamoDB is TestFaultsRemote with DynamoDB Local behind
// the server.
func TestFaultsRemoteDynamoDB(t *testing.T) {
	t.Parallel()
	cfg := dynamoConfig(t)
	backend, err := dynamodb.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := startProxy(t, serveBackend(t, backend), 22, rates(nil))
	runChecked(t, remoteOpener(p.URL()), faultWorkload(10, p), true)
	requireFaults(t, p)
}
