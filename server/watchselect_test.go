package server_test

import (
	"context"
	"strings"
	"testing"

	"nameservice.dev/nameservice/internal/nswire"
	"nameservice.dev/nameservice/server"
)

// GET /ns/v1/watch?concerns=head&kind=ledger starts from the ledgers only,
// and reports their head changes only, though their indexes and a graph
// source change first; a malformed selection is refused with 400.
func TestWatchSelection(t *testing.T) {
	s := start(t, server.Options{})
	ctx := context.Background()
	must(t, s.ns.Init(ctx, "db"))
	must(t, s.ns.PublishGraphSource(ctx, "gs", "db:Bm25Index", nil, nil))
	st := s.stream(t, "/ns/v1/watch?concerns=head&kind=ledger")
	if ev := st.next(t); !strings.HasPrefix(ev, "event: "+nswire.EventRecord) || !strings.Contains(ev, `"id":"db:main"`) {
		t.Fatalf("first event %q, want the ledger's record", ev)
	}
	if ev := st.next(t); !strings.HasPrefix(ev, "event: "+nswire.EventSynced) {
		t.Fatalf("second event %q, want synced (the graph source is not a ledger)", ev)
	}
	_, err := s.ns.PublishIndex(ctx, "db", 1, "i1")
	must(t, err)
	_, err = s.ns.PublishIndex(ctx, "gs", 1, "g1")
	must(t, err)
	_, err = s.ns.PublishCommit(ctx, "db", 1, "c1")
	must(t, err)
	for {
		ev := st.next(t)
		if strings.HasPrefix(ev, ":") {
			continue // keep-alive
		}
		if !strings.Contains(ev, `"id":"db:main","concern":"head"`) {
			t.Fatalf("the stream of heads of ledgers reported %q", ev)
		}
		break
	}
	for _, bad := range []string{"concerns=heads", "kind=table", "concerns=head,7"} {
		if code, b := s.call(t, "GET", "/ns/v1/watch?"+bad, ""); code != 400 || !strings.Contains(b, "InvalidArgument") {
			t.Errorf("watch?%s: %d %s, want 400", bad, code, b)
		}
	}
}
