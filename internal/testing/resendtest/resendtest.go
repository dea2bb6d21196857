// Package resendtest checks how a driver answers a resend
// (driver.Write.Resend) of a branch create or drop: it writes nothing, is
// done when the store shows the write landed, and answers outcome unknown
// otherwise, never "already exists", "not found" or a second write.
package resendtest

import (
	"context"
	"errors"
	"testing"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/model"
)

// Memory says which landed writes a store remembers once the branch they
// wrote has changed since: a create's once the branch was dropped, a
// drop's once the branch was created again. A resend of a write the store
// does not remember must answer outcome unknown.
type Memory struct{ Creates, Drops bool }

// Branches runs the cases on a new ledger name. first and other are two
// clients of one store (as two ns serve instances would be).
func Branches(t *testing.T, first, other *nameservice.NameService, name string, remembers Memory) {
	t.Helper()
	ctx := context.Background()
	b := branches{t: t, ctx: ctx, other: other, branch: name + ":dev"}
	testenv.Must(t, other.Init(ctx, name))
	_, err := other.PublishCommit(ctx, name, 1, "c1")
	testenv.Must(t, err)

	// A create refused (the branch existed), the branch dropped since: the
	// resend must not create it.
	testenv.Must(t, b.create(other, driver.Write{}))
	refused := driver.Write{ID: driver.NewWriteID()}
	if err := b.create(first, refused); !errors.Is(err, model.ErrAlreadyExists) {
		t.Fatalf("create of a taken branch = %v, want already exists", err)
	}
	testenv.Must(t, other.DropBranch(ctx, b.branch))
	b.wantUnknown("resend of a branch create refused earlier, branch dropped since", b.create(other, resend(refused)))
	b.wantBranch(false, "after the resend of a refused create (the resend created it)")

	// A create that landed: its resend is done; once the branch is
	// dropped, done when the store remembers, else outcome unknown.
	landed := driver.Write{ID: driver.NewWriteID()}
	testenv.Must(t, b.create(first, landed))
	testenv.Must(t, b.create(other, resend(landed)))
	testenv.Must(t, other.DropBranch(ctx, b.branch))
	if err := b.create(other, resend(landed)); remembers.Creates {
		testenv.Must(t, err)
	} else {
		b.wantUnknown("resend of a create that landed, branch dropped since", err)
	}
	b.wantBranch(false, "after a resend of a create that landed and was dropped since (the resend created it again)")

	// A drop never sent: its resend must not drop. A drop that landed,
	// the branch created again since: its resend must leave the new one.
	testenv.Must(t, b.create(other, driver.Write{}))
	b.wantUnknown("resend of a drop, no attempt on record", other.DropBranch(driver.WithWrite(ctx, resend(driver.Write{ID: driver.NewWriteID()})), b.branch))
	b.wantBranch(true, "after the resend of a drop that never landed (the resend dropped it)")
	drop := driver.Write{ID: driver.NewWriteID()}
	testenv.Must(t, first.DropBranch(driver.WithWrite(ctx, drop), b.branch))
	testenv.Must(t, b.create(other, driver.Write{}))
	if err := other.DropBranch(driver.WithWrite(ctx, resend(drop)), b.branch); remembers.Drops {
		testenv.Must(t, err)
	} else {
		b.wantUnknown("resend of a drop that landed, branch created again since", err)
	}
	b.wantBranch(true, "created again after a drop, then the drop's resend (the resend dropped the new branch)")
	if rec, err := other.Lookup(ctx, name); err != nil || rec.Branches != 1 {
		t.Fatalf("source after the resends: %+v, %v; want 1 branch", rec, err)
	}
}

type branches struct {
	t      *testing.T
	ctx    context.Context
	other  *nameservice.NameService
	branch string
}

// create creates the branch through ns as write w (no ID: a fresh one,
// as driver.WriteFrom reads it).
func (b branches) create(ns *nameservice.NameService, w driver.Write) error {
	_, err := ns.CreateBranch(driver.WithWrite(b.ctx, w), b.branch, nameservice.BranchOptions{})
	return err
}

func (b branches) wantUnknown(what string, err error) {
	b.t.Helper()
	if !errors.Is(err, model.ErrOutcomeUnknown) {
		b.t.Fatalf("%s = %v, want outcome unknown", what, err)
	}
}

func (b branches) wantBranch(exists bool, why string) {
	b.t.Helper()
	_, err := b.other.Lookup(b.ctx, b.branch)
	if exists && err != nil || !exists && !errors.Is(err, model.ErrNotFound) {
		b.t.Fatalf("lookup of the branch %s: %v", why, err)
	}
}

func resend(w driver.Write) driver.Write { return driver.Write{ID: w.ID, Resend: true} }
