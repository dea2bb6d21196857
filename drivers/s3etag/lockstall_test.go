package s3etag_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/s3etag"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// TestLockLostWriteKeepsLock: in lock mode a push's unconditional PUT is
// answered 500 before versitygw has applied it (the request stalls on its
// way: it lands a moment later). Another writer pushing from the same
// ETag meanwhile must not get the lock at once: the stalled PUT, written
// without a precondition, would land over its write, which had been
// answered applied. The lock is only taken over after timeout × skew, as
// for a holder that died mid-write.
func TestLockLostWriteKeepsLock(t *testing.T) {
	t.Parallel()
	endpoint, bucket := newBucket(t)
	lc := newLockTable(t, 5*time.Second) // skew 2: takeover after 10 s, well after the PUT lands
	target, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	forward := httputil.NewSingleHostReverseProxy(target)
	objKey := "/" + bucket + "/stall/ns@v2/db/main.json"
	var armed, stalled, settling atomic.Bool
	startB, bDone, landed := make(chan struct{}), make(chan struct{}), make(chan struct{})
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		onKey := armed.Load() && r.URL.Path == objKey
		switch {
		case onKey && r.Method == http.MethodPut && stalled.CompareAndSwap(false, true):
			body, err := io.ReadAll(r.Body)
			if err != nil {
				return
			}
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>stalled</Message></Error>`)
			// The request lands once the other writer is done, or after 3 s.
			stalledReq := r.Clone(context.WithoutCancel(r.Context()))
			go func() {
				select {
				case <-bDone:
				case <-time.After(3 * time.Second):
				}
				stalledReq.Body = io.NopCloser(strings.NewReader(string(body)))
				forward.ServeHTTP(httptest.NewRecorder(), stalledReq)
				close(landed)
			}()
			return
		case onKey && r.Method == http.MethodGet && stalled.Load() && settling.CompareAndSwap(false, true):
			// The push reads back what it wrote: its lock is released (or
			// not) by now. Let the other writer push first.
			close(startB)
			<-landed
		}
		forward.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)

	cfg := baseConfig(endpoint, bucket, jsonld.LayoutB)
	cfg.Prefix = "stall"
	cfg.Lock = lc
	ctx := context.Background()
	direct, err := s3etag.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	viaProxy := cfg
	viaProxy.Endpoint = proxy.URL
	stalling, err := s3etag.Open(ctx, viaProxy)
	if err != nil {
		t.Fatal(err)
	}
	defer stalling.Close()
	id := model.ID{Name: "db", Branch: "main"}
	if err := direct.Create(ctx, model.NewLedger(id, 1)); err != nil {
		t.Fatal(err)
	}
	if out, err := direct.Update(ctx, id, model.Head, driver.IfAbove(), model.RefValue("c1", 1)); err != nil || !out.Applied {
		t.Fatalf("publish v1: %+v %v", out, err)
	}
	if _, err := stalling.Get(ctx, id); err != nil {
		t.Fatal(err)
	}
	armed.Store(true)

	var wg sync.WaitGroup
	var bOut driver.Outcome
	var bErr error
	wg.Go(func() {
		defer close(bDone)
		select {
		case <-startB:
		case <-time.After(20 * time.Second):
			bErr = context.DeadlineExceeded
			return
		}
		bctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		bOut, bErr = direct.Update(bctx, id, model.Head, driver.IfAbove(), model.RefValue("c3", 3))
	})
	aOut, aErr := stalling.Update(ctx, id, model.Head, driver.IfAbove(), model.RefValue("c2", 2))
	wg.Wait()
	t.Logf("stalled push v2: %+v %v; other push v3: %+v %v", aOut, aErr, bOut, bErr)
	rec, err := direct.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if bErr == nil && bOut.Applied && rec.Head.V < 3 {
		t.Fatalf("head = %v after the push of v3 was answered applied: the stalled PUT of v2 landed over it", rec.Head)
	}
	if aErr == nil && aOut.Applied && rec.Head.V < 2 {
		t.Fatalf("head = %v after the push of v2 was answered applied", rec.Head)
	}
}
