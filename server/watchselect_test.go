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
	s := Start(t, server.Options{})
	ctx := context.Background()
	Must(t, s.NS.Init(ctx, "db"))
	Must(t, s.NS.PublishGraphSource(ctx, "gs", "db:Bm25Index", nil, nil))
	st := s.Stream(t, "/ns/v1/watch?concerns=head&kind=ledger")
	if ev := st.Next(t); !strings.HasPrefix(ev, "event: "+nswire.EventRecord) || !strings.Contains(ev, `"id":"db:main"`) {
		t.Fatalf("first event %q, want the ledger's record", ev)
	}
	if ev := st.Next(t); !strings.HasPrefix(ev, "event: "+nswire.EventSynced) {
		t.Fatalf("second event %q, want synced (the graph source is not a ledger)", ev)
	}
	_, err := s.NS.PublishIndex(ctx, "db", 1, "i1")
	Must(t, err)
	_, err = s.NS.PublishIndex(ctx, "gs", 1, "g1")
	Must(t, err)
	_, err = s.NS.PublishCommit(ctx, "db", 1, "c1")
	Must(t, err)
	for {
		ev := st.Next(t)
		if strings.HasPrefix(ev, ":") {
			continue // keep-alive
		}
		if !strings.Contains(ev, `"id":"db:main","concern":"head"`) {
			t.Fatalf("the stream of heads of ledgers reported %q", ev)
		}
		break
	}
	for _, bad := range []string{"concerns=heads", "kind=table", "concerns=head,7"} {
		if code, b := s.Call(t, "GET", "/ns/v1/watch?"+bad, ""); code != 400 || !strings.Contains(b, "InvalidArgument") {
			t.Errorf("watch?%s: %d %s, want 400", bad, code, b)
		}
	}
}
