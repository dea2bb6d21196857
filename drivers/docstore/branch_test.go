package docstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/internal/branching"
	"nameservice.dev/nameservice/internal/testing/resendtest"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// TestBranchSettlesDeadWriters leaves a create (claimed, never committed)
// and a drop (counted down in the source, its branch marked) half-done by
// writers that died, and checks that the next branch operation on the
// source settles both: the create undone, its late commit refused; the
// drop finished.
func TestBranchSettlesDeadWriters(t *testing.T) {
	stores(t, func(t *testing.T, open func() *Driver) {
		ctx := context.Background()
		d := open()
		ns := nameservice.New(d)
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		id := func(s string) model.ID { i, _ := model.ParseID(s); return i }
		edit := func(s string, fn func(b *branching.Book)) {
			t.Helper()
			bs := branchStore{d}
			b, err := bs.ReadBook(ctx, id(s))
			must(err)
			fn(b)
			done, err := bs.WriteBook(ctx, b, nil)
			must(err)
			if !done {
				t.Fatalf("bookkeeping of %s changed meanwhile", s)
			}
		}
		stale := time.Now().Add(-2 * branching.StaleAfter).UnixMilli()
		must(ns.Init(ctx, "db"))
		_, err := ns.PublishCommit(ctx, "db", 1, "c1")
		must(err)
		_, err = ns.CreateBranch(ctx, "db:gone", nameservice.BranchOptions{})
		must(err)

		// The dead create: counted and claimed, never committed.
		ghost := model.NewLedger(id("db:ghost"), 0)
		ghost.SourceBranch = "main"
		claim := metaDoc(ghost, "tokghost", time.Now().UnixMilli())
		must(d.claim(ctx, claim, time.Time{}))
		edit("db", func(b *branching.Book) {
			b.Ops = append(b.Ops, jsonld.BranchOp{Op: jsonld.BranchCreate, Branch: "db:ghost", Token: "tokghost", Incarnation: "tokghost", At: stale, Delta: 1})
			b.Branches++
		})
		// The dead drop: its branch marked, the source counted down.
		var inc string
		edit("db:gone", func(b *branching.Book) {
			inc = b.Incarnation
			b.Ops = append(b.Ops, jsonld.BranchOp{Op: jsonld.BranchDropping, Branch: "db:gone", Token: "tokgone", Incarnation: inc, At: stale})
		})
		edit("db", func(b *branching.Book) {
			b.Ops = append(b.Ops, jsonld.BranchOp{Op: jsonld.BranchDrop, Branch: "db:gone", Token: "tokgone", Incarnation: inc, At: stale, Delta: -1})
			b.Branches--
		})

		_, err = ns.CreateBranch(ctx, "db:dev", nameservice.BranchOptions{})
		must(err)
		rec, err := ns.Lookup(ctx, "db")
		must(err)
		if rec.Branches != 1 {
			t.Fatalf("source has branches = %d after settling, want 1 (dev)", rec.Branches)
		}
		if _, err := ns.Lookup(ctx, "db:gone"); !errors.Is(err, nameservice.ErrNotFound) {
			t.Fatalf("the half-dropped branch: %v, want it dropped", err)
		}
		if err := d.commit(ctx, claim); !errors.Is(err, model.ErrUnavailable) {
			t.Fatalf("the settled create's late commit: %v, want ErrUnavailable", err)
		}
		if _, err := ns.Lookup(ctx, "db:ghost"); !errors.Is(err, nameservice.ErrNotFound) {
			t.Fatalf("the settled create's branch: %v", err)
		}
		b, err := branchStore{d}.ReadBook(ctx, id("db"))
		must(err)
		if len(b.Ops) != 0 {
			t.Fatalf("steps left in the source: %+v", b.Ops)
		}
	})
}

// TestBranchResend: a resend of a branch create or drop writes nothing and
// is done only when the documents show the write (resendtest): the branch
// of its generation, the purge's mark while it stands.
func TestBranchResend(t *testing.T) {
	stores(t, func(t *testing.T, open func() *Driver) {
		resendtest.Branches(t, nameservice.New(open()), nameservice.New(open()), "resend"+testenv.RandomHex(3), resendtest.Memory{})
	})
}
