package remote_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/conformance"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/fs"
	"nameservice.dev/nameservice/drivers/mem"
	"nameservice.dev/nameservice/drivers/remote"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
	"nameservice.dev/nameservice/server"
)

// serve starts a server over backend on a loopback listener for the test.
func serve(t *testing.T, backend driver.Driver, opts server.Options) *httptest.Server {
	t.Helper()
	if opts.Auth == nil {
		opts.NoAuth = true
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = 20 * time.Millisecond
	}
	srv := server.New(nameservice.New(backend), opts)
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		_ = srv.Close()
		hs.Close()
		_ = backend.Close()
	})
	return hs
}

// harness runs a server in front of the backend newBackend opens, and
// gives the suite independent http:// clients of it; the suite corrupts
// records in the backend behind the server with the function newBackend
// returns beside it.
func harness(newBackend func(t *testing.T) (driver.Driver, conformance.CorruptFunc)) conformance.Harness {
	return conformance.CorruptibleHarnessFunc(func(_ context.Context, t *testing.T) (conformance.Opener, conformance.CorruptFunc, error) {
		backend, corrupt := newBackend(t)
		hs := serve(t, backend, server.Options{})
		return func(context.Context) (driver.Driver, error) {
			return remote.Open(context.Background(), remote.Config{BaseURL: hs.URL})
		}, corrupt, nil
	})
}

// TestConformanceMem corrupts records in the mem store behind the server,
// so the suite also sees unreadable records through the service.
func TestConformanceMem(t *testing.T) {
	t.Parallel()
	conformance.Run(t, harness(func(*testing.T) (driver.Driver, conformance.CorruptFunc) {
		s := mem.NewStore()
		return s.Open(), func(_ context.Context, id model.ID) error { return s.Corrupt(id) }
	}))
}

// noWatch hides the mem driver's change feed, so the server watches by
// polling; it keeps its collector and its branches.
type noWatch struct {
	driver.Driver
	driver.Brancher
}

func (n noWatch) Collect(ctx context.Context, o driver.CollectOptions) (driver.CollectStats, error) {
	return n.Driver.(driver.Collector).Collect(ctx, o)
}

func TestConformanceMemPolled(t *testing.T) {
	t.Parallel()
	conformance.Run(t, harness(func(*testing.T) (driver.Driver, conformance.CorruptFunc) {
		s := mem.NewStore()
		d := s.Open()
		return noWatch{d, d}, func(_ context.Context, id model.ID) error { return s.Corrupt(id) }
	}))
}

func TestConformanceFS(t *testing.T) {
	t.Parallel()
	conformance.Run(t, harness(func(t *testing.T) (driver.Driver, conformance.CorruptFunc) {
		cfg := fs.Config{Dir: t.TempDir(), Layout: jsonld.LayoutB}
		d, err := fs.Open(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return d, func(_ context.Context, id model.ID) error { return testenv.CorruptFile(cfg.Dir, jsonld.LayoutB, id) }
	}))
}
