package server_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/drivers/mem"
	"nameservice.dev/nameservice/drivers/remote"
	"nameservice.dev/nameservice/internal/nswire"
	"nameservice.dev/nameservice/model"
	"nameservice.dev/nameservice/server"
)

// IDs with '/', ':', spaces, '%', '?', '#', '@' and non-ASCII travel in paths
// and come back as the same record, through the http:// driver and by hand.
func TestPathEncoding(t *testing.T) {
	s := Start(t, server.Options{})
	client := nameservice.New(mustOpen(t, s.URL))
	ctx := context.Background()
	ids := []string{
		"tenant/customers:release/v1.0", "a b/c%d:e?f#g", "ünï/cödé:brånch", "x:y", "plain",
		"a+b/c&d=e;f,g@h:$!'()*", "deep/er/and/deeper:b/r/a/n/c/h",
	}
	for i, raw := range ids {
		if id, _ := model.ParseID(raw); strings.Contains(raw, "@") {
			// No new record may take an '@' (guard.CheckNewID); one
			// another writer left must still travel.
			Must(t, client.Import(ctx, model.NewLedger(id, 1)))
		} else {
			Must(t, client.Init(ctx, raw))
		}
		addr := "addr-" + raw
		if _, err := client.PublishCommit(ctx, raw, int64(i+1), addr); err != nil {
			t.Fatalf("%q: %v", raw, err)
		}
		direct, err := s.NS.Head(ctx, raw)
		if err != nil || !direct.Equal(nameservice.RefValue(addr, int64(i+1))) {
			t.Fatalf("%q: the server stored %v, %v", raw, direct, err)
		}
		id, _ := model.ParseID(raw)
		st, b := s.Call(t, "GET", "/ns/v1/records/"+nswire.PathID(id), "")
		var rec model.Record
		if st != 200 || rec.UnmarshalJSON([]byte(b)) != nil || rec.ID != id {
			t.Fatalf("%q by hand at %s: %d %s", raw, nswire.PathID(id), st, b)
		}
	}
	var got []string
	for rec, err := range client.List(ctx, nameservice.ListOptions{}) {
		Must(t, err)
		got = append(got, rec.ID.String())
	}
	if len(got) != len(ids) {
		t.Fatalf("list = %q, want %d records", got, len(ids))
	}
	// An invalid ID in a path is a 400 naming the rule.
	st, b := s.Call(t, "GET", "/ns/v1/records/a:b:c", "")
	if st != 400 || !strings.Contains(b, "more than one ':'") {
		t.Fatalf("invalid ID: %d %s", st, b)
	}
}

func mustOpen(t *testing.T, url string) *remote.Driver { return mustRemoteB(t, url) }

// mustRemoteB opens an http:// driver of the server at url for the test
// or benchmark.
func mustRemoteB(tb testing.TB, url string) *remote.Driver {
	tb.Helper()
	d, err := remote.Open(context.Background(), remote.Config{BaseURL: url})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = d.Close() })
	return d
}

// The server keeps the watermark rules itself: a client of the raw routes
// cannot move a watermark back or write a malformed value.
func TestPushRules(t *testing.T) {
	s := Start(t, server.Options{})
	Must(t, s.NS.Init(context.Background(), "db"))
	for _, c := range []struct{ name, concern, body, wantErr string }{
		{"at_least on head", "head", `{"condition":"at_least","new":{"v":1,"payload":{"address":"a","t":1}}}`, "index only"},
		{"CAS not above", "status", `{"condition":"equals","expected":{"v":1,"payload":{"state":"ready"}},"new":{"v":1,"payload":{"state":"x"}}}`, "not above"},
		{"equals without expected", "status", `{"condition":"equals","new":{"v":2,"payload":{"state":"x"}}}`, "needs an expected"},
		{"unborn new", "config", `{"condition":"equals","expected":{"v":0},"new":{"v":0}}`, "needs a payload"},
		{"t differs from v", "head", `{"condition":"above","new":{"v":2,"payload":{"address":"a","t":1}}}`, "differs"},
		{"unknown condition", "head", `{"condition":"sideways","new":{"v":1,"payload":{"address":"a","t":1}}}`, "sideways"},
		{"unknown field", "head", `{"condition":"above","new":{"v":1,"payload":{"address":"a","t":1}},"x":1}`, "unknown field"},
		{"unknown concern", "tail", `{"condition":"above","new":{"v":1,"payload":{"address":"a","t":1}}}`, "unknown concern"},
	} {
		st, b := s.Call(t, "POST", "/ns/v1/push/"+c.concern+"/db:main", c.body)
		if st != 400 || !strings.Contains(b, c.wantErr) || !strings.Contains(b, `"code":"InvalidArgument"`) {
			t.Errorf("%s: %d %s, want 400 mentioning %q", c.name, st, b, c.wantErr)
		}
	}
	// A conflict is a 409 carrying the current value.
	st, b := s.Call(t, "POST", "/ns/v1/push/status/db:main", `{"condition":"equals","expected":{"v":1,"payload":{"state":"other"}},"new":{"v":2,"payload":{"state":"x"}}}`)
	Want(t, "conflict", st, b, 409, `{"applied":false,"current":{"v":1,"payload":{"state":"ready"}}}`)
}

// A resend with the same idempotency key gets the first answer, also when
// the first push was applied and a second run would be refused.
func TestIdempotentReplay(t *testing.T) {
	store := mem.NewStore()
	s := StartOn(t, store.Open(), server.Options{})
	other := StartOn(t, store.Open(), server.Options{}) // another instance over the same store
	Must(t, s.NS.Init(context.Background(), "db"))
	body := `{"condition":"above","new":{"v":1,"payload":{"address":"a","t":1}}}`
	hdr := []string{nswire.HeaderIdempotencyKey, "k1", nswire.HeaderAttempt, "1"}
	st, b := s.Call(t, "POST", "/ns/v1/push/head/db:main", body, hdr...)
	Want(t, "first", st, b, 200, `{"applied":true,"current":{"v":1,"payload":{"address":"a","t":1}}}`)
	resp := s.Do(t, "POST", "/ns/v1/push/head/db:main", body, nswire.HeaderIdempotencyKey, "k1", nswire.HeaderAttempt, "2")
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get(nswire.HeaderReplayed) != "true" {
		t.Fatalf("resend: %d replayed=%q, want the first answer replayed", resp.StatusCode, resp.Header.Get(nswire.HeaderReplayed))
	}
	// The same key for another request is refused.
	st, _ = s.Call(t, "POST", "/ns/v1/push/head/db:main", strings.Replace(body, `"a"`, `"b"`, 1), hdr...)
	if st != 400 {
		t.Fatalf("key reused for a different body: %d, want 400", st)
	}
	// A resend the other instance never saw is resolved against the
	// backend, which recorded the write's ID with the write: applied.
	st, b = other.Call(t, "POST", "/ns/v1/push/head/db:main", body, nswire.HeaderIdempotencyKey, "k1", nswire.HeaderAttempt, "2")
	Want(t, "resend on another instance", st, b, 200, `{"applied":true,"current":{"v":1,"payload":{"address":"a","t":1}}}`)
	// A resend whose write the backend does not hold is an unknown
	// outcome, even when the value is the same: another writer may have
	// written it, and the resend's first attempt may have landed on a
	// record purged since.
	st, b = s.Call(t, "POST", "/ns/v1/push/head/db:main", body, nswire.HeaderIdempotencyKey, "k-elsewhere", nswire.HeaderAttempt, "2")
	if st != 503 || !strings.Contains(b, "outcome unknown") || !strings.Contains(b, `"outcome_unknown":true`) {
		t.Fatalf("unseen resend: %d %s, want 503 outcome unknown", st, b)
	}
	// Without a resend mark the same push is a plain conflict.
	stale := `{"condition":"above","new":{"v":1,"payload":{"address":"z","t":1}}}`
	st, _ = s.Call(t, "POST", "/ns/v1/push/head/db:main", stale)
	if st != 409 {
		t.Fatalf("first attempt refused: %d, want 409", st)
	}
}

// Concurrent identical resends run the write once.
func TestIdempotentConcurrentResends(t *testing.T) {
	s := Start(t, server.Options{})
	Must(t, s.NS.Init(context.Background(), "db"))
	body := `{"condition":"equals","expected":{"v":1,"payload":{"state":"ready"}},"new":{"v":2,"payload":{"state":"busy"}}}`
	var wg sync.WaitGroup
	codes := make([]int, 8)
	for i := range codes {
		wg.Go(func() {
			codes[i], _ = s.Call(t, "POST", "/ns/v1/push/status/db:main", body, nswire.HeaderIdempotencyKey, "same", nswire.HeaderAttempt, "1")
		})
	}
	wg.Wait()
	for i, c := range codes {
		if c != 200 {
			t.Fatalf("request %d: %d, want every copy to get the one applied answer", i, c)
		}
	}
}

func TestHealthReadyMetricsOpenAPI(t *testing.T) {
	s := Start(t, server.Options{})
	Must(t, s.NS.Init(context.Background(), "db"))
	s.Call(t, "POST", "/ns/v1/push/status/db:main", `{"condition":"equals","expected":{"v":9,"payload":{"state":"x"}},"new":{"v":10,"payload":{"state":"y"}}}`)
	s.Call(t, "GET", "/v1/fluree/storage/ns/db", "")
	for path, wantText := range map[string]string{
		"/healthz": "ok", "/readyz": "ok", "/openapi.yaml": "openapi: 3.1",
		"/metrics": `nameservice_push_conflicts_total{concern="status"} 1`,
	} {
		st, b := s.Call(t, "GET", path, "")
		if st != http.StatusOK || !strings.Contains(b, wantText) {
			t.Errorf("%s: %d, want 200 containing %q; got %.300s", path, st, wantText, b)
		}
	}
	_, b := s.Call(t, "GET", "/metrics", "")
	for _, series := range []string{`route="GET /v1/fluree/storage/ns/{alias}"`, "nameservice_http_requests_total", "nameservice_http_request_duration_seconds", "nameservice_sse_subscribers", "nameservice_unknown_outcomes_total"} {
		if !strings.Contains(b, series) {
			t.Errorf("/metrics lacks %s", series)
		}
	}
}

// A full server refuses more event streams than MaxStreams.
func TestMaxStreams(t *testing.T) {
	s := Start(t, server.Options{MaxStreams: 1})
	s.Stream(t, "/ns/v1/watch")
	st, _ := s.Call(t, "GET", "/ns/v1/watch", "")
	if st != http.StatusServiceUnavailable {
		t.Fatalf("second stream: %d, want 503", st)
	}
}

// Close ends the event streams (graceful shutdown must not wait on them).
func TestCloseEndsStreams(t *testing.T) {
	s := Start(t, server.Options{})
	ev := s.Stream(t, "/ns/v1/watch")
	if e := ev.Next(t); !strings.HasPrefix(e, "event: synced") {
		t.Fatalf("first event %q", e)
	}
	Must(t, s.Srv.Close())
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, ev.Resp.Body)
		done <- err
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the stream stayed open after Close")
	}
}

// Every route the server answers is described in the OpenAPI document.
func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	s := Start(t, server.Options{})
	_, doc := s.Call(t, "GET", "/openapi.yaml", "")
	for _, path := range []string{
		"/healthz", "/readyz", "/metrics", "/openapi.yaml", "/ns/v1/records", "/ns/v1/records/{id}", "/ns/v1/heads/{id}",
		"/ns/v1/push/{concern}/{id}", "/ns/v1/retract/{id}", "/ns/v1/graph-sources/{id}", "/ns/v1/watch", "/ns/v1/collect",
		"/ns/v1/branches/{id}", "/ns/v1/reset-head/{id}", "/v1/fluree/branch", "/v1/fluree/branch/{ledger}", "/v1/fluree/drop-branch",
		"/.well-known/fluree.json", "/v1/fluree/nameservice/refs/{alias}/commit", "/v1/fluree/nameservice/refs/{alias}/index",
		"/v1/fluree/nameservice/refs/{alias}/init", "/v1/fluree/nameservice/snapshot", "/v1/fluree/storage/ns/{alias}",
		"/v1/fluree/events",
	} {
		if !strings.Contains(doc, "\n  "+path+":\n") {
			t.Errorf("openapi.yaml does not describe %s", path)
		}
		// And the route exists: no 404 from the router for its shape.
		probe := strings.NewReplacer("{id}", "x:main", "{alias}", "x:main", "{concern}", "status", "{ledger}", "x").Replace(path)
		resp := s.Do(t, "OPTIONS", probe, "")
		resp.Body.Close()
		if resp.StatusCode == http.StatusNotFound {
			t.Errorf("%s: the router does not know it", path)
		}
	}
}
