package s3etag_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/s3etag"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// slowAnswers is a proxy in front of the S3 server that, while slow is
// set to a method, forwards each request of that method to a defining file
// (main.json) at once and holds its answer back until the client gives up
// waiting: the write lands, its answer never comes.
func slowAnswers(t *testing.T, endpoint string) (proxyURL string, slow *atomic.Value, held *atomic.Int64) {
	t.Helper()
	target, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	slow, held = &atomic.Value{}, &atomic.Int64{}
	slow.Store("")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != slow.Load().(string) || !strings.HasSuffix(r.URL.Path, "/main.json") {
			proxy.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		proxy.ServeHTTP(rec, r.Clone(context.WithoutCancel(r.Context())))
		held.Add(1)
		<-r.Context().Done()
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(srv.Close)
	return srv.URL, slow, held
}

// TestLockLeaseCutsWrite: in lock mode a write must be done within its
// lease; one whose answer comes later is a lost answer, not the caller's
// cancellation. A push resolves it by reading back (applied), and a
// collector leaves the removal to its next run instead of failing.
func TestLockLeaseCutsWrite(t *testing.T) {
	t.Parallel()
	endpoint, bucket := newBucket(t)
	proxyURL, slow, held := slowAnswers(t, endpoint)
	cfg := baseConfig(proxyURL, bucket, jsonld.LayoutB)
	cfg.Prefix = "lease"
	cfg.Lock = newLockTable(t, 8*time.Second) // long enough for the requests not held back
	ctx := context.Background()
	d, err := s3etag.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	id := model.ID{Name: "db", Branch: "main"}
	if err := d.Create(ctx, model.NewLedger(id, 1)); err != nil {
		t.Fatal(err)
	}

	slow.Store(http.MethodPut)
	out, err := d.Update(ctx, id, model.Head, driver.IfAbove(), model.RefValue("c1", 1))
	if err != nil || !out.Applied {
		t.Fatalf("push whose answer outlived the lease: %+v, %v; want it applied", out, err)
	}
	if held.Load() == 0 {
		t.Fatal("no PUT answer was held back")
	}
	slow.Store("")

	ns := nameservice.New(d)
	if err := ns.Purge(ctx, "db"); err != nil {
		t.Fatal(err)
	}
	slow.Store(http.MethodDelete)
	var lost int
	_, err = ns.Collect(ctx, nameservice.CollectOptions{Report: func(c nameservice.Collected) {
		if !c.Removed && strings.Contains(c.Reason, "answer was lost") {
			lost++
		}
	}})
	if err != nil || lost != 1 {
		t.Fatalf("collect whose removal outlived the lease: %v, %d reported lost; want no error and one", err, lost)
	}
}
