package objstore_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/internal/objstore"
	"nameservice.dev/nameservice/jsonld"
)

// losingStore is a memStore on which "another writer" rewrites key before
// each of the next losses Puts of it, so that each of them fails.
type losingStore struct {
	*memStore
	key    string
	losses atomic.Int32
}

func (s *losingStore) Put(ctx context.Context, key string, data []byte, pc objstore.Precondition) (string, error) {
	if key == s.key && s.losses.Add(-1) >= 0 {
		o, _, _ := s.memStore.Get(ctx, key)
		if _, err := s.memStore.Put(ctx, key, o, objstore.Precondition{}); err != nil {
			return "", err
		}
	}
	return s.memStore.Put(ctx, key, data, pc)
}

// TestPushOutlastsOtherWriters: a push that loses its write more often
// than the attempts an update makes at least (16) to writers that keep
// succeeding is still applied: losing to progress is contention, not an
// outage. Three writers of one object in lock mode starved one so on a
// loaded machine.
func TestPushOutlastsOtherWriters(t *testing.T) {
	t.Parallel()
	e := newBranchEnv(t, jsonld.LayoutB)
	st := &losingStore{memStore: e.st}
	for k := range e.st.objs {
		if strings.HasSuffix(k, "db/main.json") {
			st.key = k
		}
	}
	if st.key == "" {
		t.Fatalf("no defining file of db:main among %v", e.st.objs)
	}
	const losses = 24
	st.losses.Store(losses)
	ns := nameservice.New(memDriver{objstore.New(st, objstore.Config{Name: "mem", Layout: jsonld.LayoutB})})
	out, err := ns.PublishCommit(e.ctx, "db", 2, "c2")
	if err != nil || !out.Applied {
		t.Fatalf("publish after %d lost writes = %+v, %v; want it applied", losses, out, err)
	}
	if n := st.losses.Load(); n >= 0 {
		t.Fatalf("%d of the %d lost writes left: the push did not meet them all", n+1, losses)
	}
	if rec, err := ns.Lookup(e.ctx, "db"); err != nil || rec.Head.V != 2 {
		t.Fatalf("lookup after the publish = %+v, %v; want head t=2", rec, err)
	}
}
