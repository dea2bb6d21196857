package objstore_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/internal/objstore"
	"nameservice.dev/nameservice/internal/testing/resendtest"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// stale is when a step recorded by a writer that died was recorded: past
// objstore.StaleAfter.
var stale = time.Now().Add(-2 * objstore.StaleAfter).UnixMilli()

type branchEnv struct {
	t   *testing.T
	ctx context.Context
	r   *objstore.Records
	ns  *nameservice.NameService
	st  *memStore
	l   jsonld.Layout
}

func newBranchEnv(t *testing.T, l jsonld.Layout) *branchEnv {
	st := newMemStore()
	r := objstore.New(st, objstore.Config{Name: "mem", Layout: l})
	e := &branchEnv{t: t, ctx: context.Background(), r: r, ns: nameservice.New(memDriver{r}), st: st, l: l}
	e.must(e.ns.Init(e.ctx, "db"))
	_, err := e.ns.PublishCommit(e.ctx, "db", 1, "c1")
	e.must(err)
	return e
}

func (e *branchEnv) must(err error) {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
}

func (e *branchEnv) id(s string) model.ID {
	id, err := model.ParseID(s)
	e.must(err)
	return id
}

func (e *branchEnv) create(ids ...string) {
	e.t.Helper()
	for _, id := range ids {
		_, err := e.ns.CreateBranch(e.ctx, id, nameservice.BranchOptions{})
		e.must(err)
	}
}

// edit rewrites id's bookkeeping as a writer that stopped would leave it.
func (e *branchEnv) edit(id string, fn func(b *objstore.Book)) {
	e.t.Helper()
	e.must(objstore.EditBook(e.ctx, e.r, e.id(id), fn))
}

func (e *branchEnv) incarnation(id string) string {
	var inc string
	e.edit(id, func(b *objstore.Book) { inc = b.Incarnation })
	return inc
}

func (e *branchEnv) wantBranches(id string, n int64) {
	e.t.Helper()
	rec, err := e.ns.Lookup(e.ctx, id)
	e.must(err)
	if rec.Branches != n {
		e.t.Fatalf("%s has branches = %d, want %d", id, rec.Branches, n)
	}
}

// wantNoSteps fails unless id's defining file records no step.
func (e *branchEnv) wantNoSteps(id string) {
	e.t.Helper()
	e.edit(id, func(b *objstore.Book) {
		if len(b.Ops) != 0 {
			e.t.Fatalf("%s still records %+v", id, b.Ops)
		}
	})
}

// TestBranchSettleCreate leaves two creates half-done, one before and one
// after writing its branch, and checks that the next branch operation on
// the source settles both: the count keeps the branch that exists, and the
// other's creator, were it only held up, can no longer write its branch.
func TestBranchSettleCreate(t *testing.T) {
	for _, l := range []jsonld.Layout{jsonld.LayoutB, jsonld.LayoutC} {
		t.Run(l.String(), func(t *testing.T) {
			e := newBranchEnv(t, l)
			ghost, real := jsonld.BranchOp{Op: jsonld.BranchCreate, Branch: "db:ghost", Token: "tokghost", Incarnation: "tokghost", At: stale, Delta: 1},
				jsonld.BranchOp{Op: jsonld.BranchCreate, Branch: "db:real", Token: "tokreal", Incarnation: "tokreal", At: stale, Delta: 1}
			e.edit("db", func(b *objstore.Book) { b.Ops, b.Branches = append(b.Ops, ghost, real), b.Branches+2 })
			rec := model.NewLedger(e.id("db:real"), 0)
			rec.SourceBranch = "main"
			e.must(objstore.CreateAs(e.ctx, e.r, rec, "tokreal"))
			e.wantBranches("db", 2)

			err := e.ns.DropBranch(e.ctx, "db")
			if !errors.Is(err, nameservice.ErrHasBranches) || !strings.Contains(err.Error(), "has 1 branch") {
				t.Fatalf("drop of the source: %v, want ErrHasBranches naming 1 (the create that wrote its branch)", err)
			}
			e.wantBranches("db", 1)
			e.wantNoSteps("db")
			ghostRec := model.NewLedger(e.id("db:ghost"), 0)
			ghostRec.SourceBranch = "main"
			if err := objstore.CreateAs(e.ctx, e.r, ghostRec, "tokghost"); !errors.Is(err, model.ErrUnavailable) {
				t.Fatalf("the settled create's late write: %v, want ErrUnavailable", err)
			}
			if _, err := e.ns.Lookup(e.ctx, "db:ghost"); !errors.Is(err, nameservice.ErrNotFound) {
				t.Fatalf("lookup of the settled create's branch: %v", err)
			}
			e.create("db:ghost") // the name is free for a create of its own
			e.wantBranches("db", 2)
		})
	}
}

// TestBranchSettleDrop leaves three drops half-done: a (its source counted
// it down and it carries its dropping entry: finished by the settler), b
// (only its dropping entry was set: cleared by the next drop of b), c (its
// source counted it down but its entry was cleared: undone).
func TestBranchSettleDrop(t *testing.T) {
	for _, l := range []jsonld.Layout{jsonld.LayoutB, jsonld.LayoutC} {
		t.Run(l.String(), func(t *testing.T) {
			e := newBranchEnv(t, l)
			e.create("db:a", "db:b", "db:c")
			for _, s := range []struct {
				branch       string
				flag, source bool
			}{{"db:a", true, true}, {"db:b", true, false}, {"db:c", false, true}} {
				op := jsonld.BranchOp{Op: jsonld.BranchDropping, Branch: s.branch, Token: "tok" + s.branch[3:], Incarnation: e.incarnation(s.branch), At: stale}
				if s.flag {
					e.edit(s.branch, func(b *objstore.Book) { b.Ops = append(b.Ops, op) })
				}
				if s.source {
					op.Op, op.Delta = jsonld.BranchDrop, -1
					e.edit("db", func(b *objstore.Book) { b.Ops, b.Branches = append(b.Ops, op), b.Branches-1 })
				}
			}
			e.wantBranches("db", 1)

			e.create("db:d") // settles a and c in the source
			if _, err := e.ns.Lookup(e.ctx, "db:a"); !errors.Is(err, nameservice.ErrNotFound) {
				t.Fatalf("a, whose drop was half-done, still exists (%v)", err)
			}
			e.wantBranches("db", 3) // b, c, d
			e.wantNoSteps("db")
			if err := e.ns.DropBranch(e.ctx, "db:b"); err != nil {
				t.Fatalf("drop of b, with a stale dropping entry of a dead writer: %v", err)
			}
			e.wantBranches("db", 2)
			for _, id := range []string{"db:c", "db:d", "db"} {
				e.must(e.ns.DropBranch(e.ctx, id))
			}
		})
	}
}

// TestBranchCreateRefusedWhileDropping: a source being dropped takes no new
// branch, and a drop of it waits while a fresh drop of it is under way.
func TestBranchCreateRefusedWhileDropping(t *testing.T) {
	e := newBranchEnv(t, jsonld.LayoutB)
	e.create("db:dev")
	_, err := e.ns.PublishCommit(e.ctx, "db:dev", 2, "c2")
	e.must(err)
	e.edit("db:dev", func(b *objstore.Book) {
		b.Ops = append(b.Ops, jsonld.BranchOp{Op: jsonld.BranchDropping, Branch: "db:dev", Token: "fresh", At: time.Now().UnixMilli()})
	})
	_, err = e.ns.CreateBranch(e.ctx, "db:dev2", nameservice.BranchOptions{From: "dev"})
	if !errors.Is(err, nameservice.ErrNotFound) || !strings.Contains(err.Error(), "being dropped") {
		t.Fatalf("create from a source being dropped: %v", err)
	}
	ctx, cancel := context.WithTimeout(e.ctx, 300*time.Millisecond)
	defer cancel()
	if err := e.ns.DropBranch(ctx, "db:dev"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("drop during another's fresh drop: %v, want it to wait until its context ends", err)
	}
	e.wantBranches("db", 1)
}

// mainFile returns the key of db:main's defining file.
func (e *branchEnv) mainFile() string {
	e.t.Helper()
	for k := range e.st.objs {
		if strings.HasSuffix(k, "db/main.json") {
			return k
		}
	}
	e.t.Fatalf("no defining file of db:main among %v", e.st.objs)
	return ""
}

// contendedStore is a memStore whose object key is rewritten by "another
// writer" before each Put of it for which lose holds, so that the Put fails
// if it is conditional.
type contendedStore struct {
	*memStore
	key  string
	lose func() bool
}

func (s *contendedStore) Put(ctx context.Context, key string, data []byte, pc objstore.Precondition) (string, error) {
	if key == s.key && s.lose() {
		o, _, _ := s.memStore.Get(ctx, key)
		if _, err := s.memStore.Put(ctx, key, o, objstore.Precondition{}); err != nil {
			return "", err
		}
	}
	return s.memStore.Put(ctx, key, data, pc)
}

// TestBranchCreateWindowAfterContention: a create that waits out other
// writers of its source longer than objstore.CreateWindow before its entry
// is recorded still creates the branch, since the window runs from the
// entry's recording.
func TestBranchCreateWindowAfterContention(t *testing.T) {
	t.Parallel()
	e := newBranchEnv(t, jsonld.LayoutB)
	until := time.Now().Add(objstore.CreateWindow + time.Second)
	st := &contendedStore{memStore: e.st, key: e.mainFile(), lose: func() bool {
		if time.Now().After(until) {
			return false
		}
		time.Sleep(time.Second) // a second apart
		return true
	}}
	ns := nameservice.New(memDriver{objstore.New(st, objstore.Config{Name: "mem", Layout: jsonld.LayoutB})})
	if _, err := ns.CreateBranch(e.ctx, "db:late", nameservice.BranchOptions{}); err != nil {
		t.Fatalf("create after %v of contention: %v", objstore.CreateWindow, err)
	}
	e.wantBranches("db", 1)
	e.wantNoSteps("db")
	if _, err := e.ns.Lookup(e.ctx, "db:late"); err != nil {
		t.Fatalf("lookup of the branch: %v", err)
	}
}

// hookedStore is a memStore that calls after once, after the first Put
// that when accepts.
type hookedStore struct {
	*memStore
	once  sync.Once
	when  func(key string, data []byte) bool
	after func()
}

func (s *hookedStore) Put(ctx context.Context, key string, data []byte, pc objstore.Precondition) (string, error) {
	tag, err := s.memStore.Put(ctx, key, data, pc)
	if err == nil && s.when(key, data) {
		s.once.Do(s.after)
	}
	return tag, err
}

// TestBranchDropFinishedBySettler: a dropper held up past StaleAfter once
// its step is recorded in the source finds its branch purged by the
// settler that finished the drop for it. The branch is dropped, once,
// and the dropper says so: not ErrNotFound.
func TestBranchDropFinishedBySettler(t *testing.T) {
	for _, l := range []jsonld.Layout{jsonld.LayoutB, jsonld.LayoutC} {
		t.Run(l.String(), func(t *testing.T) {
			e := newBranchEnv(t, l)
			e.create("db:a")
			st := &hookedStore{memStore: e.st}
			st.when = func(key string, data []byte) bool {
				return strings.Contains(key, "db/main") && strings.Contains(string(data), `"drop"`)
			}
			st.after = func() {
				// Another writer of the source, a minute later: it finds the
				// step stale and settles it, finishing the purge.
				e.edit("db", func(b *objstore.Book) {
					for i := range b.Ops {
						b.Ops[i].At = stale
					}
				})
				e.wantBranches("db", 0)
				e.create("db:b")
				e.wantBranches("db", 1)
				if _, err := e.ns.Lookup(e.ctx, "db:a"); !errors.Is(err, nameservice.ErrNotFound) {
					t.Errorf("the settler left a, whose drop was recorded in the source (%v)", err)
				}
			}
			dropper := nameservice.New(memDriver{objstore.New(st, objstore.Config{Name: "mem", Layout: l})})
			if err := dropper.DropBranch(e.ctx, "db:a"); err != nil {
				t.Fatalf("drop of a, finished by a settler while its dropper was held up: %v, want success", err)
			}
			e.wantBranches("db", 1) // b
			e.wantNoSteps("db")
		})
	}
}

// TestBranchResend: a resend of a branch create or drop writes nothing and
// is done only when the files show the write (resendtest): the branch of
// its incarnation, the purge's mark with its entry.
func TestBranchResend(t *testing.T) {
	for _, l := range []jsonld.Layout{jsonld.LayoutB, jsonld.LayoutC} {
		t.Run(l.String(), func(t *testing.T) {
			st := newMemStore()
			open := func() *nameservice.NameService {
				return nameservice.New(memDriver{objstore.New(st, objstore.Config{Name: "mem", Layout: l})})
			}
			resendtest.Branches(t, open(), open(), "db", resendtest.Memory{})
		})
	}
}
