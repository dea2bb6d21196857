package remote_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/conformance"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/dynamodb"
	"nameservice.dev/nameservice/drivers/fs"
	"nameservice.dev/nameservice/drivers/mem"
	"nameservice.dev/nameservice/drivers/remote"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/server"
)

// lossyHarness runs two servers over one backend (each opened by
// newBackend), behind a balancer that sends each request to the next, so
// that a resend reaches the server that did not run the first attempt. The
// lossy clients reach the balancer through a proxy that loses answers.
func lossyHarness(newBackend func(t *testing.T) func() driver.Driver) conformance.AnswerLoser {
	return conformance.LossyHarnessFunc(func(_ context.Context, t *testing.T) (conformance.Opener, conformance.LossyOpener, error) {
		backend := newBackend(t)
		var servers []http.Handler
		for range 2 {
			srv := server.New(nameservice.New(backend()), server.Options{NoAuth: true, PollInterval: 20 * time.Millisecond})
			t.Cleanup(func() { _ = srv.Close() })
			servers = append(servers, srv)
		}
		var next atomic.Int64
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			servers[next.Add(1)%int64(len(servers))].ServeHTTP(w, r)
		}))
		t.Cleanup(hs.Close)
		open := func(ctx context.Context) (driver.Driver, error) {
			return remote.Open(ctx, remote.Config{BaseURL: hs.URL})
		}
		lossy := func(ctx context.Context, lose func() bool) (driver.Driver, error) {
			url, err := testenv.LossyProxy(t, hs.URL, lose)
			if err != nil {
				return nil, err
			}
			return remote.Open(ctx, remote.Config{BaseURL: url})
		}
		return open, lossy, nil
	})
}

func TestLostAnswersMem(t *testing.T) {
	conformance.RunLostAnswers(t, lossyHarness(func(*testing.T) func() driver.Driver {
		s := mem.NewStore()
		return func() driver.Driver { return s.Open() }
	}))
}

func TestLostAnswersFS(t *testing.T) {
	conformance.RunLostAnswers(t, lossyHarness(func(t *testing.T) func() driver.Driver {
		dir := t.TempDir()
		return func() driver.Driver {
			d, err := fs.Open(context.Background(), fs.Config{Dir: dir, Layout: jsonld.LayoutB})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = d.Close() })
			return d
		}
	}))
}

func TestLostAnswersDynamoDB(t *testing.T) {
	conformance.RunLostAnswers(t, lossyHarness(func(t *testing.T) func() driver.Driver {
		cfg := dynamoConfig(t)
		return func() driver.Driver {
			d, err := dynamodb.Open(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = d.Close() })
			return d
		}
	}))
}
