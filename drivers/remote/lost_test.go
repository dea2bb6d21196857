package remote_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/drivers/mem"
	"nameservice.dev/nameservice/drivers/remote"
	"nameservice.dev/nameservice/internal/faultproxy"
	"nameservice.dev/nameservice/server"
)

// When every answer to a request is lost, the error says so, matches
// ErrUnavailable and names the record's ID once (a write's says its
// outcome is unknown): answers cut off by a reset, and 500s from a proxy
// that forwarded the request.
func TestLostAnswersNameTheIDOnce(t *testing.T) {
	for _, f := range []faultproxy.Fault{faultproxy.ResetAfter, faultproxy.Error500After} {
		t.Run(f.String(), func(t *testing.T) {
			hs := serve(t, mem.NewStore().Open(), server.Options{})
			p, err := faultproxy.Start(faultproxy.Config{Target: hs.URL, Rates: map[faultproxy.Fault]float64{f: 1}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = p.Close() })
			d, err := remote.Open(context.Background(), remote.Config{BaseURL: p.URL(), MaxAttempts: 2})
			if err != nil {
				t.Fatal(err)
			}
			ns := nameservice.New(d)
			t.Cleanup(func() { _ = ns.Close() })
			ctx := context.Background()
			for what, err := range map[string]error{
				"init":   ns.Init(ctx, "lost"),
				"lookup": second(ns.Lookup(ctx, "lost")),
			} {
				if !errors.Is(err, nameservice.ErrUnavailable) || strings.Count(err.Error(), "lost:main") != 1 ||
					(what == "init") != strings.Contains(err.Error(), "outcome unknown") {
					t.Errorf("%s: %v, want an ErrUnavailable naming lost:main once", what, err)
				}
				t.Logf("%s: %v", what, err)
			}
		})
	}
}

func second[T any](_ T, err error) error { return err }
