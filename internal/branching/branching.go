// Package branching is the protocol by which drivers without multi-record
// transactions (the file and object stores through internal/objstore, the
// document stores) create and drop branches together with their source's
// branch count, with conditional writes of one record at a time.
//
// A create or drop writes two records: the branch and its source's
// bookkeeping (the count, Meta.Branches). Each step is recorded in the
// source, in the conditional write that changes the count, as an entry
// (jsonld.BranchOp) with a random token, and removed by the write that ends
// it: a lost answer is resolved by looking for the token, and a step whose
// writer died is settled, once older than StaleAfter, by the next writer
// of that source's bookkeeping (docs/format.md, "Branches"). A create's
// branch takes the entry's token as its incarnation, and is written only
// within CreateWindow of the entry, well inside StaleAfter, so that creator
// and settler never race (writers' clocks must agree to well within the
// difference). A drop first sets a dropping entry on the branch, then
// records itself in the source, then purges the branch conditional on that
// entry; a settler clears or uses that entry with conditional writes of
// the branch's bookkeeping, so exactly one of them happens. A record with
// a step under way cannot be dropped: its count or the entry says so.
package branching

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
	// StaleAfter is how long a step may stay recorded before another
	// writer settles it.
	StaleAfter = time.Minute
	// CreateWindow bounds the time from recording a create to the last
	// write of the new branch.
	CreateWindow = 20 * time.Second
	// attempts bounds the conditional writes of one step to one record's
	// bookkeeping, which all creates and drops of its branches contend for.
	attempts = 64
)

// Book is the branch bookkeeping of one record as a Store read it.
type Book struct {
	ID model.ID
	// Record is the record's identity (kind, retracted, source branch).
	Record      *model.Record
	Incarnation string // the record's, "" when it has none
	Ops         []jsonld.BranchOp
	Branches    int64
	// Version is the Store's, for WriteBook's condition.
	Version any
}

// State is what Store.Branch found of the record an entry names.
type State int

const (
	Gone    State = iota // absent, purged, or another incarnation
	Live                 // a live record of the incarnation
	Pending              // a create of the incarnation under way, not visible yet
	// Tokenless: a live record without an incarnation, one whose token a
	// Fluree rewrite dropped (files and object stores): the settlers take it
	// for the incarnation's record, a resend cannot.
	Tokenless
)

// exists reports whether a settler takes state for the branch's record.
func exists(state State) bool { return state == Live || state == Tokenless }

// Store is what the protocol needs of a backend; its other errors are
// classified with driver sentinels.
type Store interface {
	// Name prefixes messages ("s3", "docstore").
	Name() string
	// ReadBook reads the bookkeeping of record id afresh: an error
	// wrapping model.ErrNotFound when there is no such (live) record.
	ReadBook(ctx context.Context, id model.ID) (*Book, error)
	// WriteBook writes b.Ops and b.Branches over the version b was read
	// at; done is false when the record changed meanwhile. After a lost
	// answer it reads the record again: done when landed (nil: never)
	// accepts its entries.
	WriteBook(ctx context.Context, b *Book, landed func([]jsonld.BranchOp) bool) (done bool, err error)
	// Branch reads the record id, of which an entry names incarnation
	// inc, and returns its state and, when live, its entries.
	Branch(ctx context.Context, id model.ID, inc string) (State, []jsonld.BranchOp, error)
	// Fence makes a create of id with incarnation inc that has not
	// landed fail from now on, as far as the store can (see Create).
	Fence(ctx context.Context, id model.ID, inc string) error
	// Create creates rec with incarnation inc, as Driver.Create does,
	// sending no write after deadline, and failing (ErrUnavailable) once it
	// meets a fence of inc.
	Create(ctx context.Context, rec *model.Record, inc string, deadline time.Time) error
	// Purge removes record id as Driver.Delete does while check accepts its
	// entries, called each time it reads them.
	Purge(ctx context.Context, id model.ID, check func([]jsonld.BranchOp) error) error
}

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
func (b *Book) remove(tok string, undo bool) bool {
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
func bookkeep(ctx context.Context, s Store, id model.ID, change func(*Book) (bool, error), landed func([]jsonld.BranchOp) bool) error {
	for attempt := range attempts {
		if attempt > 1 {
			if err := driverutil.Sleep(ctx, driverutil.Jitter(5*time.Millisecond, 250*time.Millisecond, attempt-2)); err != nil {
				return err
			}
		}
		b, err := s.ReadBook(ctx, id)
		if err != nil {
			return err
		}
		settledOps, settledN, err := settle(ctx, s, b)
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
		done, err := s.WriteBook(ctx, b, ok)
		switch {
		case err != nil:
			return err
		case done && cerr == nil:
			return nil
		case done && !errors.Is(cerr, errRetry):
			return cerr
		}
	}
	return fmt.Errorf("%s: %w: the branch bookkeeping of %s is still contended after %d attempts", s.Name(), model.ErrUnavailable, id, attempts)
}

// CreateBranch creates rec (a branch: SourceBranch set) and counts it in
// its source, as driver.Brancher says. The step's token, also the branch's
// incarnation, is the write's ID, so that a resend (driver.Write.Resend)
// can tell without writing: done when the branch is of that incarnation,
// outcome unknown otherwise (running the protocol again could create a
// branch dropped since, or answer "already exists" for its own branch).
func CreateBranch(ctx context.Context, s Store, rec *model.Record) error {
	src := model.ID{Name: rec.ID.Name, Branch: rec.SourceBranch}
	w := driver.WriteOf(ctx)
	tok := w.ID
	if w.Resend {
		state, _, err := s.Branch(ctx, rec.ID, tok)
		switch {
		case err != nil:
			return fmt.Errorf("%s: create %s: %w", s.Name(), rec.ID, driver.OutcomeUnknown("the write is a resend, and reading the branch failed: %v", err))
		case state != Live:
			return fmt.Errorf("%s: create %s: %w", s.Name(), rec.ID, driver.OutcomeUnknown("the write is a resend, and the branch is not one it created: an earlier attempt may still be on its way, or its branch have been dropped since"))
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
	err := bookkeep(ctx, s, src, func(b *Book) (bool, error) {
		switch {
		case recorded(b.Ops):
			return false, nil // recorded by an attempt whose answer was lost
		case b.Record.Kind != model.Ledger:
			return false, fmt.Errorf("%s: %w: source %s is a %s", s.Name(), model.ErrWrongKind, b.ID, b.Record.Kind)
		case b.Record.Retracted:
			return false, fmt.Errorf("%s: %w: source %s is retracted", s.Name(), model.ErrNotFound, b.ID)
		case slices.ContainsFunc(b.Ops, dropping):
			return false, fmt.Errorf("%s: %w: source %s is being dropped", s.Name(), model.ErrNotFound, b.ID)
		}
		op.At = time.Now().UnixMilli()
		b.Ops, b.Branches = append(slices.Clone(b.Ops), op), b.Branches+1
		return true, nil
	}, recorded)
	if err != nil {
		return err
	}
	err = s.Create(ctx, rec, tok, time.UnixMilli(op.At).Add(CreateWindow))
	if c := model.Code(err); c == model.Unavailable || c == model.Canceled {
		return err // left for a settler
	}
	// The entry, when left behind by a failed write, only holds off drops
	// of the source until it is settled.
	undo := err != nil
	_ = bookkeep(ctx, s, src, func(b *Book) (bool, error) { return b.remove(tok, undo), nil }, lacksOp(tok))
	return err
}

// DropBranch drops branch id and uncounts it in its source, as
// driver.Brancher says; see the protocol above. A resend
// (driver.Write.Resend) writes nothing: its purge is done when it finds
// this write's mark, outcome unknown otherwise (the branch may have been
// created again since).
func DropBranch(ctx context.Context, s Store, id model.ID) error {
	if driver.WriteOf(ctx).Resend {
		return s.Purge(ctx, id, func([]jsonld.BranchOp) error {
			return fmt.Errorf("%s: drop %s: %w", s.Name(), id, driver.OutcomeUnknown("the write is a resend, and the branch holds no mark of it"))
		})
	}
	tok := driverutil.Token()
	self := jsonld.BranchOp{Op: jsonld.BranchDropping, Branch: id.String(), Token: tok}
	source := ""
	err := bookkeep(ctx, s, id, func(b *Book) (bool, error) {
		source = b.Record.SourceBranch
		// Only a ledger without branches and with no step under way may be
		// dropped (another writer's fresh drop of it is waited for).
		switch {
		case has(b.Ops, tok):
			return false, nil // set by an attempt whose answer was lost
		case b.Record.Kind != model.Ledger:
			return false, fmt.Errorf("%s: %w: %s is a %s, not a branch", s.Name(), model.ErrWrongKind, b.ID, b.Record.Kind)
		case b.Branches > 0:
			return false, fmt.Errorf("%s: %w", s.Name(), driverutil.HasBranchesError(b.ID, b.Branches))
		case slices.ContainsFunc(b.Ops, dropping):
			return false, errRetry // another drop of it, not stale yet: wait for it
		case len(b.Ops) > 0:
			return false, fmt.Errorf("%s: %w: %s has a branch being created or dropped (%s); try again", s.Name(), model.ErrHasBranches, b.ID, b.Ops[0].Branch)
		}
		self.Incarnation, self.At = b.Incarnation, time.Now().UnixMilli()
		b.Ops = append(slices.Clone(b.Ops), self)
		return true, nil
	}, hasOp(tok))
	if err != nil {
		return err
	}
	return dropMarked(ctx, s, id, source, self)
}

func dropping(op jsonld.BranchOp) bool { return op.Op == jsonld.BranchDropping }

// dropMarked drops branch id, whose bookkeeping holds self: the source's
// count and entry, the purge, the entry's removal.
func dropMarked(ctx context.Context, s Store, id model.ID, source string, self jsonld.BranchOp) error {
	src := model.ID{Name: id.Name, Branch: source}
	counted := source != "" && src != id
	if counted {
		op := self
		op.Op = jsonld.BranchDrop
		err := bookkeep(ctx, s, src, func(b *Book) (bool, error) {
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
	err := s.Purge(ctx, id, requireOp(self.Token))
	if errors.Is(err, model.ErrNotFound) {
		// The branch went while it carried this drop's entry: this purge
		// landed before (its answer lost), or a settler finished the drop.
		err = nil
	}
	if counted && (err == nil || errors.Is(err, errDropLost)) {
		// An entry left behind (a failed write) is settled later.
		undo := errors.Is(err, errDropLost)
		_ = bookkeep(ctx, s, src, func(b *Book) (bool, error) { return b.remove(self.Token, undo), nil }, lacksOp(self.Token))
	}
	if errors.Is(err, errDropLost) {
		return fmt.Errorf("%s: drop %s: %w: the drop was held up past %v and undone; try again", s.Name(), id, model.ErrUnavailable, StaleAfter)
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
