// Branches: the protocol by which a create or drop of a branch changes its
// source's branch count, with conditional writes of one file at a time.
//
// A create or drop writes two records: the branch and its source's
// bookkeeping (the count, f:branches, and the steps under way,
// f:branchOps, in its defining file). Each step is recorded in the
// source, in the conditional write that changes the count, as an entry
// (jsonld.BranchOp) with a random token, and removed by the write that ends
// it: a lost answer is resolved by looking for the token, and a step whose
// writer died is settled, once older than staleAfter, by the next writer
// of that source's bookkeeping (docs/format.md, "Branches"). A create's
// branch takes the entry's token as its incarnation, and is written only
// within createWindow of the entry, well inside staleAfter, so that creator
// and settler never race (writers' clocks must agree to well within the
// difference). A drop first sets a dropping entry on the branch, then
// records itself in the source, then purges the branch conditional on that
// entry; a settler clears or uses that entry with conditional writes of
// the branch's bookkeeping, so exactly one of them happens. A record with
// a step under way cannot be dropped: its count or the entry says so.

package objstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

const (
	// staleAfter is how long a step may stay recorded before another
	// writer settles it.
	staleAfter = time.Minute
	// createWindow bounds the time from recording a create to the last
	// write of the new branch.
	createWindow = 20 * time.Second
	// attempts bounds the conditional writes of one step to one record's
	// bookkeeping, which all creates and drops of its branches contend for.
	attempts = 64
)

// book is the branch bookkeeping of one record, read from its defining
// file.
type book struct {
	ID model.ID
	// Record is the record's identity (kind, retracted, source branch).
	Record      *model.Record
	Incarnation string // the record's, "" when it has none
	Ops         []jsonld.BranchOp
	Branches    int64
	def         *cached // the defining file, for writeBook's condition
}

// branchState is what stateOf found of the record an entry names.
type branchState int

const (
	gone branchState = iota // absent, purged, or another incarnation
	live                    // a live record of the incarnation
	// tokenless: a live record without an incarnation, one whose token a
	// Fluree rewrite dropped: the settlers take it for the incarnation's
	// record, a resend cannot.
	tokenless
)

// exists reports whether a settler takes state for the branch's record.
func exists(state branchState) bool { return state == live || state == tokenless }

var (
	// errRetry makes bookkeep try again after a backoff.
	errRetry = errors.New("retry")
	// errDropLost: the dropping entry a drop set was cleared.
	errDropLost = errors.New("the drop's entry on the branch was cleared")
)

func has(ops []jsonld.BranchOp, tok string) bool {
	return slices.ContainsFunc(ops, func(op jsonld.BranchOp) bool { return op.Token == tok })
}

func hasOp(tok string) func([]jsonld.BranchOp) bool {
	return func(ops []jsonld.BranchOp) bool { return has(ops, tok) }
}

func lacksOp(tok string) func([]jsonld.BranchOp) bool {
	return func(ops []jsonld.BranchOp) bool { return !has(ops, tok) }
}

// remove drops entry tok from b and, when undo is set, its delta from the
// count (never below 0); false when the entry was not there.
func (b *book) remove(tok string, undo bool) bool {
	i := slices.IndexFunc(b.Ops, func(op jsonld.BranchOp) bool { return op.Token == tok })
	if i < 0 {
		return false
	}
	if undo {
		b.Branches = max(b.Branches-b.Ops[i].Delta, 0)
	}
	b.Ops = slices.Delete(slices.Clone(b.Ops), i, i+1)
	return true
}

// bookkeep edits the bookkeeping of id with change, settling stale steps
// first, and writes it conditionally, reading again after a conflict.
// change returns false to write nothing (what settling changed is written
// anyway), errRetry to try again after a backoff, or an error to stop
// (after writing what settling changed).
func bookkeep(ctx context.Context, r *Records, id model.ID, change func(*book) (bool, error), landed func([]jsonld.BranchOp) bool) error {
	for attempt := range attempts {
		if attempt > 1 {
			if err := driverutil.Sleep(ctx, driverutil.Jitter(5*time.Millisecond, 250*time.Millisecond, attempt-2)); err != nil {
				return err
			}
		}
		b, err := r.readBook(ctx, id)
		if err != nil {
			return err
		}
		settledOps, settledN, err := settle(ctx, r, b)
		if err != nil {
			return err
		}
		dirty := settledN != b.Branches || len(settledOps) != len(b.Ops)
		b.Ops, b.Branches = settledOps, settledN
		changed, cerr := change(b)
		if !changed && !dirty {
			if errors.Is(cerr, errRetry) {
				continue
			}
			return cerr
		}
		ok := landed
		if cerr != nil { // write what settling found, then answer
			b.Ops, b.Branches, ok = settledOps, settledN, nil
		}
		done, err := r.writeBook(ctx, b, ok)
		switch {
		case err != nil:
			return err
		case done && cerr == nil:
			return nil
		case done && !errors.Is(cerr, errRetry):
			return cerr
		}
	}
	return fmt.Errorf("%s: %w: the branch bookkeeping of %s is still contended after %d attempts", r.cfg.Name, model.ErrUnavailable, id, attempts)
}

// createBranch creates rec (a branch: SourceBranch set) and counts it in
// its source, as driver.Brancher says. The step's token, also the branch's
// incarnation, is the write's ID, so that a resend (driver.Write.Resend)
// can tell without writing: done when the branch is of that incarnation,
// outcome unknown otherwise (running the protocol again could create a
// branch dropped since, or answer "already exists" for its own branch).
func createBranch(ctx context.Context, r *Records, rec *model.Record) error {
	src := model.ID{Name: rec.ID.Name, Branch: rec.SourceBranch}
	w := driver.WriteOf(ctx)
	tok := w.ID
	if w.Resend {
		state, _, err := r.stateOf(ctx, rec.ID, tok)
		switch {
		case err != nil:
			return fmt.Errorf("%s: create %s: %w", r.cfg.Name, rec.ID, driver.OutcomeUnknown("the write is a resend, and reading the branch failed: %v", err))
		case state != live:
			return fmt.Errorf("%s: create %s: %w", r.cfg.Name, rec.ID, driver.OutcomeUnknown("the write is a resend, and the branch is not one it created: an earlier attempt may still be on its way, or its branch have been dropped since"))
		}
		return nil
	}
	op := jsonld.BranchOp{Op: jsonld.BranchCreate, Branch: rec.ID.String(), Token: tok, Incarnation: tok, Delta: 1}
	// The window runs from the entry's time as recorded, stamped afresh by
	// each attempt so that waiting out a contended source does not use it
	// up; an entry found recorded tells its own time.
	recorded := func(ops []jsonld.BranchOp) bool {
		i := slices.IndexFunc(ops, func(o jsonld.BranchOp) bool { return o.Token == tok })
		if i >= 0 {
			op.At = ops[i].At
		}
		return i >= 0
	}
	err := bookkeep(ctx, r, src, func(b *book) (bool, error) {
		switch {
		case recorded(b.Ops):
			return false, nil // recorded by an attempt whose answer was lost
		case b.Record.Kind != model.Ledger:
			return false, fmt.Errorf("%s: %w: source %s is a %s", r.cfg.Name, model.ErrWrongKind, b.ID, b.Record.Kind)
		case b.Record.Retracted:
			return false, fmt.Errorf("%s: %w: source %s is retracted", r.cfg.Name, model.ErrNotFound, b.ID)
		case slices.ContainsFunc(b.Ops, dropping):
			return false, fmt.Errorf("%s: %w: source %s is being dropped", r.cfg.Name, model.ErrNotFound, b.ID)
		}
		op.At = time.Now().UnixMilli()
		b.Ops, b.Branches = append(slices.Clone(b.Ops), op), b.Branches+1
		return true, nil
	}, recorded)
	if err != nil {
		return err
	}
	err = r.createAs(ctx, rec, tok, time.UnixMilli(op.At).Add(createWindow))
	if c := model.Code(err); c == model.Unavailable || c == model.Canceled {
		return err // left for a settler
	}
	// The entry, when left behind by a failed write, only holds off drops
	// of the source until it is settled.
	undo := err != nil
	_ = bookkeep(ctx, r, src, func(b *book) (bool, error) { return b.remove(tok, undo), nil }, lacksOp(tok))
	return err
}

// dropBranch drops branch id and uncounts it in its source, as
// driver.Brancher says; see the protocol above. A resend
// (driver.Write.Resend) writes nothing: its purge is done when it finds
// this write's mark, outcome unknown otherwise (the branch may have been
// created again since).
func dropBranch(ctx context.Context, r *Records, id model.ID) error {
	if driver.WriteOf(ctx).Resend {
		return r.purgeChecked(ctx, id, func([]jsonld.BranchOp) error {
			return fmt.Errorf("%s: drop %s: %w", r.cfg.Name, id, driver.OutcomeUnknown("the write is a resend, and the branch holds no mark of it"))
		})
	}
	tok := driverutil.Token()
	self := jsonld.BranchOp{Op: jsonld.BranchDropping, Branch: id.String(), Token: tok}
	source := ""
	err := bookkeep(ctx, r, id, func(b *book) (bool, error) {
		source = b.Record.SourceBranch
		// Only a ledger without branches and with no step under way may be
		// dropped (another writer's fresh drop of it is waited for).
		switch {
		case has(b.Ops, tok):
			return false, nil // set by an attempt whose answer was lost
		case b.Record.Kind != model.Ledger:
			return false, fmt.Errorf("%s: %w: %s is a %s, not a branch", r.cfg.Name, model.ErrWrongKind, b.ID, b.Record.Kind)
		case b.Branches > 0:
			return false, fmt.Errorf("%s: %w", r.cfg.Name, &driverutil.BranchesError{ID: b.ID, N: b.Branches})
		case slices.ContainsFunc(b.Ops, dropping):
			return false, errRetry // another drop of it, not stale yet: wait for it
		case len(b.Ops) > 0:
			return false, fmt.Errorf("%s: %w: %s has a branch being created or dropped (%s); try again", r.cfg.Name, model.ErrHasBranches, b.ID, b.Ops[0].Branch)
		}
		self.Incarnation, self.At = b.Incarnation, time.Now().UnixMilli()
		b.Ops = append(slices.Clone(b.Ops), self)
		return true, nil
	}, hasOp(tok))
	if err != nil {
		return err
	}
	return dropMarked(ctx, r, id, source, self)
}

func dropping(op jsonld.BranchOp) bool { return op.Op == jsonld.BranchDropping }

// dropMarked drops branch id, whose bookkeeping holds self: the source's
// count and entry, the purge, the entry's removal.
func dropMarked(ctx context.Context, r *Records, id model.ID, source string, self jsonld.BranchOp) error {
	src := model.ID{Name: id.Name, Branch: source}
	counted := source != "" && src != id
	if counted {
		op := self
		op.Op = jsonld.BranchDrop
		err := bookkeep(ctx, r, src, func(b *book) (bool, error) {
			if has(b.Ops, op.Token) {
				return false, nil
			}
			op.Delta = -min(b.Branches, 1)
			b.Ops, b.Branches = append(slices.Clone(b.Ops), op), b.Branches+op.Delta
			return true, nil
		}, hasOp(op.Token))
		switch {
		case errors.Is(err, model.ErrNotFound):
			counted = false // the source is gone: nothing to count
		case err != nil:
			return err
		}
	}
	err := r.purgeChecked(ctx, id, requireOp(self.Token))
	if errors.Is(err, model.ErrNotFound) {
		// The branch went while it carried this drop's entry: this purge
		// landed before (its answer lost), or a settler finished the drop.
		err = nil
	}
	if counted && (err == nil || errors.Is(err, errDropLost)) {
		// An entry left behind (a failed write) is settled later.
		undo := errors.Is(err, errDropLost)
		_ = bookkeep(ctx, r, src, func(b *book) (bool, error) { return b.remove(self.Token, undo), nil }, lacksOp(self.Token))
	}
	if errors.Is(err, errDropLost) {
		return fmt.Errorf("%s: drop %s: %w: the drop was held up past %v and undone; try again", r.cfg.Name, id, model.ErrUnavailable, staleAfter)
	}
	return err
}

func requireOp(tok string) func([]jsonld.BranchOp) error {
	return func(ops []jsonld.BranchOp) error {
		if !has(ops, tok) {
			return errDropLost
		}
		return nil
	}
}
