package remote_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/drivers/mem"
	"nameservice.dev/nameservice/drivers/remote"
	"nameservice.dev/nameservice/server"
)

// Heads reads a ledger's pointers with one GET /ns/v1/heads; against a
// server from before that route (a plain 404 for it) the portable Heads
// falls back to a lookup and answers the same.
func TestHeadsAndAnOlderServer(t *testing.T) {
	hs := serve(t, mem.NewStore().Open(), server.Options{})
	ctx := context.Background()
	for _, old := range []bool{false, true} {
		var heads, lookups atomic.Int64
		target, _ := url.Parse(hs.URL)
		proxy := httputil.NewSingleHostReverseProxy(target)
		front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case strings.HasPrefix(r.URL.Path, "/ns/v1/heads/"):
				heads.Add(1)
				if old {
					http.NotFound(w, r) // as a ServeMux without the route answers
					return
				}
			case strings.HasPrefix(r.URL.Path, "/ns/v1/records/"):
				lookups.Add(1)
			}
			proxy.ServeHTTP(w, r)
		}))
		t.Cleanup(front.Close)
		d, err := remote.Open(ctx, remote.Config{BaseURL: front.URL})
		must(t, err)
		ns := nameservice.New(d)
		id := "db" + map[bool]string{false: "new", true: "old"}[old]
		must(t, ns.Init(ctx, id))
		_, err = ns.PublishCommit(ctx, id, 3, "c3")
		must(t, err)
		lookups.Store(0)
		h, err := ns.Heads(ctx, id)
		must(t, err)
		if !h.Head.Equal(nameservice.RefValue("c3", 3)) || !h.Index.Unborn() {
			t.Fatalf("old server %v: heads %v, %v", old, h.Head, h.Index)
		}
		if heads.Load() != 1 || lookups.Load() != map[bool]int64{false: 0, true: 1}[old] {
			t.Fatalf("old server %v: %d heads and %d lookup requests", old, heads.Load(), lookups.Load())
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
