package objstore_test

import (
	"sync/atomic"
	"testing"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/internal/objstore"
	"nameservice.dev/nameservice/jsonld"
)

// TestPushOutlastsOtherWriters: a push that loses its write more often
// than the attempts an update makes at least (16) to writers that keep
// succeeding is still applied: losing to progress is contention, not an
// outage. Three writers of one object in lock mode starved one so on a
// loaded machine.
func TestPushOutlastsOtherWriters(t *testing.T) {
	t.Parallel()
	e := newBranchEnv(t, jsonld.LayoutB)
	const losses = 24
	var left atomic.Int32
	left.Store(losses)
	st := &contendedStore{memStore: e.st, key: e.mainFile(), lose: func() bool { return left.Add(-1) >= 0 }}
	ns := nameservice.New(memDriver{objstore.New(st, objstore.Config{Name: "mem", Layout: jsonld.LayoutB})})
	out, err := ns.PublishCommit(e.ctx, "db", 2, "c2")
	if err != nil || !out.Applied {
		t.Fatalf("publish after %d lost writes = %+v, %v; want it applied", losses, out, err)
	}
	if n := left.Load(); n >= 0 {
		t.Fatalf("%d of the %d lost writes left: the push did not meet them all", n+1, losses)
	}
	if rec, err := ns.Lookup(e.ctx, "db"); err != nil || rec.Head.V != 2 {
		t.Fatalf("lookup after the publish = %+v, %v; want head t=2", rec, err)
	}
}
