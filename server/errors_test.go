package server_test

import (
	"context"
	"strings"
	"testing"

	"nameservice.dev/nameservice/drivers/fs"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
	"nameservice.dev/nameservice/server"
)

// A corrupt record on a file store leaves the Fluree snapshot 200 with
// every other record, and no answer of any route, to the corrupt record or
// about it, carries the server's data directory, a store path or a stack.
func TestCorruptRecordLeaksNothing(t *testing.T) {
	dir := t.TempDir()
	d, err := fs.Open(context.Background(), fs.Config{Dir: dir, Layout: jsonld.LayoutB})
	Must(t, err)
	s := StartOn(t, d, server.Options{})
	ctx := context.Background()
	for _, n := range []string{"a", "bad", "c", "files"} {
		Must(t, s.NS.Init(ctx, n))
	}
	_, err = s.NS.PublishCommit(ctx, "a", 1, testenv.CID("a1"))
	Must(t, err)
	Must(t, s.NS.PublishGraphSource(ctx, "gs", "db:Bm25Index", nil, nil))
	// An address that is not a CID: our routes serve it (it is the
	// record's data), Fluree's never echo it.
	_, err = s.NS.PublishCommit(ctx, "files", 1, "fluree:file://ledger-store/files/t1")
	Must(t, err)
	Must(t, testenv.CorruptFile(dir, jsonld.LayoutB, model.ID{Name: "bad", Branch: "main"}))

	leaks := func(what, body string) {
		t.Helper()
		bad := []string{dir, "ns@v2/", ".json", "goroutine ", "not JSON"}
		if strings.Contains(what, "fluree") || strings.HasPrefix(what, "events") {
			bad = append(bad, "ledger-store")
		}
		for _, bad := range bad {
			if strings.Contains(body, bad) {
				t.Errorf("%s: the answer holds %q: %s", what, bad, body)
			}
		}
	}
	st, b := s.Call(t, "GET", "/v1/fluree/nameservice/snapshot", "")
	leaks("fluree snapshot", b)
	if st != 200 || !strings.Contains(b, `"ledger_id":"a:main"`) || !strings.Contains(b, `"ledger_id":"c:main"`) ||
		!strings.Contains(b, `"graph_source_id":"gs:main"`) || strings.Contains(b, "bad:main") || strings.Contains(b, "files:main") {
		t.Errorf("snapshot: %d %s, want 200 with a, c and gs only", st, b)
	}
	for _, c := range []struct {
		method, path, body string
		status             int
	}{
		{"GET", "/v1/fluree/storage/ns/bad", "", 500},
		{"GET", "/v1/fluree/storage/ns/files", "", 400},
		{"POST", "/v1/fluree/nameservice/refs/bad/commit", `{"expected":null,"new":{"id":"` + testenv.CID("x") + `","t":1}}`, 500},
		{"POST", "/v1/fluree/nameservice/refs/bad/index", `{"expected":null,"new":{"id":"` + testenv.CID("x") + `","t":1}}`, 500},
		{"POST", "/v1/fluree/nameservice/refs/bad/init", "", 500},
		{"GET", "/ns/v1/records/bad:main", "", 500},
		{"GET", "/ns/v1/records", "", 200},
		{"GET", "/ns/v1/records?prefix=b", "", 200},
		{"POST", "/ns/v1/push/head/bad:main", `{"condition":"above","new":{"v":1,"payload":{"address":"x","t":1}}}`, 500},
		{"POST", "/ns/v1/retract/bad:main", `{}`, 500},
		{"PUT", "/ns/v1/records/bad:main", `{"id":"bad:main","kind":"ledger","head":{"v":0},"index":{"v":0},"status":{"v":1,"payload":{"state":"ready"}},"config":{"v":0}}`, 500},
		{"POST", "/ns/v1/graph-sources/bad:main", `{"source_type":"db:Bm25Index"}`, 500},
	} {
		st, b := s.Call(t, c.method, c.path, c.body)
		leaks(c.method+" "+c.path, b)
		if st != c.status {
			t.Errorf("%s %s: %d %s, want %d", c.method, c.path, st, b, c.status)
		}
	}
	// The listing names the bad record by its ID and code only.
	if _, b := s.Call(t, "GET", "/ns/v1/records", ""); !strings.Contains(b, `"failed":[{"id":"bad:main","object":"bad:main","error":"read bad:main: internal error`) {
		t.Errorf("listing: %s, want bad:main in failed", b)
	}
	// Event streams: the records they start with, and the failure.
	ev := s.Stream(t, "/ns/v1/watch?prefix=")
	for got := ""; !strings.HasPrefix(got, "event: synced"); {
		got = ev.Next(t)
		leaks("watch", got)
	}
	ev = s.Stream(t, "/ns/v1/watch?id=bad:main")
	if got := ev.Next(t); !strings.HasPrefix(got, "event: error\n") {
		t.Errorf("watch of the bad record: %q, want an error event", got)
	} else {
		leaks("watch of the bad record", got)
	}
	ev = s.Stream(t, "/v1/fluree/events?all=true")
	for got := ""; !strings.Contains(got, `"resource_id":"gs:main"`); {
		got = ev.Next(t)
		leaks("events", got)
	}
	st, b = s.Call(t, "GET", "/metrics", "")
	if st != 200 || !strings.Contains(b, `nameservice_fluree_records_skipped_total{reason="unreadable",route="snapshot"} 1`) ||
		!strings.Contains(b, `nameservice_fluree_records_skipped_total{reason="not_expressible",route="snapshot"} 1`) {
		t.Errorf("metrics do not count the records the snapshot left out:\n%s", grepLines(b, "skipped"))
	}
	// A purge frees the ID, and says nothing either.
	st, b = s.Call(t, "DELETE", "/ns/v1/records/bad:main", "")
	Want(t, "purge", st, b, 204, "")
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
