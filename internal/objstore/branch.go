package objstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/layout"
	"nameservice.dev/nameservice/jsonld"
)

// Branches are kept with conditional writes only, like everything else,
// although a create or drop writes two records: the branch's files and its
// source's defining file, which holds the count (f:branches). Each step is
// first recorded in the source, in the same conditional write that changes
// the count, as an entry of f:branchOps (jsonld.BranchOp) with a random
// token, and removed by the write that ends it; so a lost answer is resolved
// by looking for the token, and a step whose writer died is found and
// settled by the next writer of that source's bookkeeping once it is older
// than BranchStaleAfter:
//
//   - create: the count goes up with the entry; then the branch's defining
//     file is created, its incarnation the entry's token; then the entry
//     goes. A create that finds the ID taken takes the count down again
//     with it. A settler keeps the count when the branch exists with that
//     incarnation; otherwise it writes a mark holding the token where the
//     branch would be (a creator that meets it gives up) and takes the
//     count down. A creator writes the branch only within createWindow of
//     recording the entry, well inside BranchStaleAfter, so the two never
//     race: writers' clocks must agree to well within the difference.
//   - drop: the branch's own defining file first gets a BranchDropping
//     entry (conditional on its count being 0, so no branch of it is being
//     created; creates of branches of it are refused from then on); then
//     the count goes down with the source's entry; then the branch is
//     purged, the mark conditional on its dropping entry; then the entry
//     goes. A settler finishes the purge when the branch still has the
//     dropping entry, keeps the count when the branch is gone, and takes
//     the count back up when the entry was cleared (a dropping entry with
//     no step left in the source is cleared once stale: the dropper then
//     finds it gone and undoes its step). Clearing the entry and marking
//     the branch are both conditional writes of the branch's defining file,
//     so exactly one of them happens.
//
// A record that has a step under way cannot be dropped: its count says so,
// or, for a drop of one of its branches, the entry does.
const (
	// BranchStaleAfter is how long a step may stay recorded before
	// another writer settles it.
	BranchStaleAfter = time.Minute
	// createWindow bounds the time from recording a create to the last
	// write of the new branch's defining file.
	createWindow = 20 * time.Second
	// branchAttempts bounds the conditional writes of one step to a
	// source's defining file: every create and drop of its branches writes
	// it, so they contend with each other by design.
	branchAttempts = 64
)

var (
	// errRetry makes bookkeep read the file again and call its change
	// function again, after a backoff.
	errRetry = errors.New("retry")
	// errDropLost: the dropping entry a drop set was cleared (after it was
	// held up past BranchStaleAfter).
	errDropLost = errors.New("the drop's mark on the branch was cleared")
)

// book is the branch bookkeeping of one record, as read from its defining
// file, for a change function of bookkeep to edit.
type book struct {
	id    driver.ID
	c     *cached
	rec   *driver.Record // the record as its defining file alone says
	ops   []jsonld.BranchOp
	n     int64 // f:branches
	dirty bool  // settling changed ops or n
	// settledOps and settledN are ops and n as settling left them, before
	// the change function edited them.
	settledOps []jsonld.BranchOp
	settledN   int64
}

func (b *book) settled() ([]jsonld.BranchOp, int64) { return b.settledOps, b.settledN }

func (b *book) has(tok string) bool { return b.find(tok) >= 0 }

func (b *book) find(tok string) int {
	return slices.IndexFunc(b.ops, func(op jsonld.BranchOp) bool { return op.Token == tok })
}

// remove drops the entry tok and, when undo is set, its delta from the
// count (never below 0). It reports whether the entry was there.
func (b *book) remove(tok string, undo bool) bool {
	i := b.find(tok)
	if i < 0 {
		return false
	}
	if undo {
		b.n = max(b.n-b.ops[i].Delta, 0)
	}
	b.ops = slices.Delete(b.ops, i, i+1)
	return true
}

func hasOp(tok string) func(*jsonld.File) bool {
	return func(f *jsonld.File) bool {
		return slices.ContainsFunc(f.BranchOps, func(op jsonld.BranchOp) bool { return op.Token == tok })
	}
}

func lacksOp(tok string) func(*jsonld.File) bool {
	has := hasOp(tok)
	return func(f *jsonld.File) bool { return !has(f) }
}

// bookkeep edits the bookkeeping of record id with change, settling stale
// steps first, and writes its defining file conditional on its tag; a
// failed precondition reads it again and calls change again. A write whose
// answer was lost counts as done when landed says so of what is there now.
// change returns false to write nothing (unless settling changed
// something), errRetry to try again later, or an error to stop.
func (r *Records) bookkeep(ctx context.Context, id driver.ID, change func(*book) (bool, error), landed func(*jsonld.File) bool) error {
	files, err := r.files(id)
	if err != nil {
		return err
	}
	f := files[0]
	for attempt := range branchAttempts {
		if err := r.backoff(ctx, attempt); err != nil {
			return err
		}
		b, err := r.readBook(ctx, id, f.Key)
		if err != nil {
			return err
		}
		if err := r.settle(ctx, b); err != nil {
			return err
		}
		b.settledOps, b.settledN = slices.Clone(b.ops), b.n
		changed, cerr := change(b)
		if !changed && !b.dirty {
			if errors.Is(cerr, errRetry) {
				continue
			}
			return cerr
		}
		ok := landed
		if cerr != nil {
			// Keep what settling found, then answer (or try again).
			b.ops, b.n = b.settled()
			ok = nil
		}
		done, err := r.writeBook(ctx, b, f, ok)
		switch {
		case err != nil:
			return err
		case done && cerr == nil:
			return nil
		case done && !errors.Is(cerr, errRetry):
			return cerr
		}
	}
	return fmt.Errorf("%s: %w: the branch bookkeeping of %s is still contended after %d attempts", r.cfg.Name, driver.ErrUnavailable, id, branchAttempts)
}

// readBook reads id's defining file afresh.
func (r *Records) readBook(ctx context.Context, id driver.ID, key string) (*book, error) {
	c, err := r.readDoc(ctx, id, key)
	if err != nil || c == nil || c.doc.Purged {
		return nil, r.orNotFound(err, id)
	}
	rec, err := jsonld.Assemble(id, c.doc)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", r.cfg.Name, r.object(key), err)
	}
	return &book{id: id, c: c, rec: rec, ops: slices.Clone(c.doc.BranchOps), n: rec.Branches}, nil
}

// writeBook writes b back over the file it was read from. done is false
// when the file changed meanwhile.
func (r *Records) writeBook(ctx context.Context, b *book, f layout.File, landed func(*jsonld.File) bool) (bool, error) {
	rec := b.rec
	rec.Branches = b.n
	data, err := jsonld.Encode(rec, jsonld.EncodeOptions{Dialect: r.cfg.Dialect, Parts: f.Parts, Prev: b.c.doc, BranchOps: &b.ops})
	if err != nil {
		return false, fmt.Errorf("%s: %s: %w", r.cfg.Name, f.Key, err)
	}
	tag, err := r.put(ctx, f.Key, data, ifMatch(b.c.tag))
	switch {
	case err == nil:
		r.remember(b.id, f.Key, tag, data)
		return true, nil
	case errors.Is(err, ErrPrecondition), errors.Is(err, ErrMissing),
		r.cfg.RetryThrottled && errors.Is(err, driver.ErrThrottled):
		return false, nil
	case r.maybeApplied(err) && ctx.Err() == nil:
		now, rerr := r.readDoc(ctx, b.id, f.Key)
		if rerr == nil && now != nil && !now.doc.Purged && landed != nil && landed(now.doc) {
			return true, nil
		}
		return false, rerr
	}
	return false, err
}

// CreateBranch implements driver.Brancher; see the protocol above.
func (r *Records) CreateBranch(ctx context.Context, rec *driver.Record) error {
	if err := r.begin(ctx); err != nil {
		return err
	}
	files, err := r.files(rec.ID)
	if err != nil {
		return err
	}
	if err := rec.Validate(); err != nil {
		return fmt.Errorf("%s: create branch: %w", r.cfg.Name, err)
	}
	src := driver.ID{Name: rec.ID.Name, Branch: rec.SourceBranch}
	tok, start := token(), time.Now()
	op := jsonld.BranchOp{Op: jsonld.BranchCreate, Branch: rec.ID.String(), Token: tok, Incarnation: tok, At: start.UnixMilli(), Delta: 1}
	err = r.bookkeep(ctx, src, func(b *book) (bool, error) {
		if b.has(tok) {
			return false, nil // recorded by an attempt whose answer was lost
		}
		if err := r.liveSource(b); err != nil {
			return false, err
		}
		b.ops, b.n = append(b.ops, op), b.n+1
		return true, nil
	}, hasOp(tok))
	if err != nil {
		return err
	}
	err = r.writeDefining(ctx, rec, files[0], tok, start.Add(createWindow))
	if err != nil && (driver.Code(err) == driver.Unavailable || driver.Code(err) == driver.Canceled) {
		return err // its outcome is unknown: left for a settler
	}
	undo := err != nil
	ferr := r.bookkeep(ctx, src, func(b *book) (bool, error) { return b.remove(tok, undo), nil }, lacksOp(tok))
	if err != nil {
		return err
	}
	// The branch exists and is counted; an entry left behind (ferr) only
	// holds off drops of the source until it is settled.
	_ = ferr
	return nil
}

// liveSource checks that b is a record branches may be created from.
func (r *Records) liveSource(b *book) error {
	switch {
	case b.rec.Kind != driver.Ledger:
		return fmt.Errorf("%s: %w: source %s is a %s", r.cfg.Name, driver.ErrWrongKind, b.id, b.rec.Kind)
	case b.rec.Retracted:
		return fmt.Errorf("%s: %w: source %s is retracted", r.cfg.Name, driver.ErrNotFound, b.id)
	case slices.ContainsFunc(b.ops, func(op jsonld.BranchOp) bool { return op.Op == jsonld.BranchDropping }):
		return fmt.Errorf("%s: %w: source %s is being dropped", r.cfg.Name, driver.ErrNotFound, b.id)
	}
	return nil
}

// DropBranch implements driver.Brancher; see the protocol above.
func (r *Records) DropBranch(ctx context.Context, id driver.ID) error {
	if err := r.begin(ctx); err != nil {
		return err
	}
	tok := token()
	self := jsonld.BranchOp{Op: jsonld.BranchDropping, Branch: id.String(), Token: tok}
	source := ""
	err := r.bookkeep(ctx, id, func(b *book) (bool, error) {
		source = b.rec.SourceBranch
		if b.has(tok) {
			return false, nil // set by an attempt whose answer was lost
		}
		if err := r.droppable(b); err != nil {
			return false, err
		}
		self.Incarnation, self.At = b.c.doc.Incarnation, time.Now().UnixMilli()
		b.ops = append(b.ops, self)
		return true, nil
	}, hasOp(tok))
	if err != nil {
		return err
	}
	return r.dropMarked(ctx, id, source, self)
}

// droppable checks that b may be dropped: a ledger without branches and
// with no step under way (a fresh drop of it by another writer is waited
// for).
func (r *Records) droppable(b *book) error {
	if b.rec.Kind != driver.Ledger {
		return fmt.Errorf("%s: %w: %s is a %s, not a branch", r.cfg.Name, driver.ErrWrongKind, b.id, b.rec.Kind)
	}
	if b.n > 0 {
		return fmt.Errorf("%s: %w", r.cfg.Name, driver.HasBranchesError(b.id, b.n))
	}
	for _, op := range b.ops {
		if op.Op == jsonld.BranchDropping {
			return errRetry // another drop of it, not stale yet: wait for it
		}
		return fmt.Errorf("%s: %w: %s has a branch being created or dropped (%s); try again", r.cfg.Name, driver.ErrHasBranches, b.id, op.Branch)
	}
	return nil
}

// dropMarked drops branch id, whose defining file holds self: the source's
// count and entry, the purge, the entry's removal.
func (r *Records) dropMarked(ctx context.Context, id driver.ID, source string, self jsonld.BranchOp) error {
	src := driver.ID{Name: id.Name, Branch: source}
	counted := source != "" && src != id
	if counted {
		op := self
		op.Op = jsonld.BranchDrop
		err := r.bookkeep(ctx, src, func(b *book) (bool, error) {
			if b.has(op.Token) {
				return false, nil
			}
			op.Delta = -min(b.n, 1)
			b.ops, b.n = append(b.ops, op), b.n+op.Delta
			return true, nil
		}, hasOp(op.Token))
		switch {
		case errors.Is(err, driver.ErrNotFound):
			counted = false // the source is gone: nothing to count
		case err != nil:
			return err
		}
	}
	err := r.purge(ctx, id, func(def *jsonld.File) error {
		if def == nil || !hasOp(self.Token)(def) {
			return errDropLost
		}
		return nil
	})
	if counted && (err == nil || errors.Is(err, errDropLost) || errors.Is(err, driver.ErrNotFound)) {
		undo := errors.Is(err, errDropLost)
		if ferr := r.bookkeep(ctx, src, func(b *book) (bool, error) { return b.remove(self.Token, undo), nil }, lacksOp(self.Token)); ferr != nil && err == nil {
			return nil // dropped; the entry left behind is settled later
		}
	}
	if errors.Is(err, errDropLost) {
		return fmt.Errorf("%s: drop %s: %w: the drop was held up past %v and undone; try again", r.cfg.Name, id, driver.ErrUnavailable, BranchStaleAfter)
	}
	return err
}

// settle settles the steps of b recorded more than BranchStaleAfter ago,
// editing b.
func (r *Records) settle(ctx context.Context, b *book) error {
	stale := time.Now().Add(-BranchStaleAfter).UnixMilli()
	for _, op := range slices.Clone(b.ops) {
		if op.At > stale {
			continue
		}
		var keep, done bool
		var err error
		switch op.Op {
		case jsonld.BranchCreate:
			keep, done, err = r.settleCreate(ctx, op)
		case jsonld.BranchDrop:
			keep, done, err = r.settleDrop(ctx, op)
		case jsonld.BranchDropping:
			keep, done, err = r.settleDropping(ctx, b, op)
		}
		if err != nil {
			return err
		}
		if done {
			b.remove(op.Token, !keep)
			b.dirty = true
		}
	}
	return nil
}

// branchDef reads the defining file of the branch op names: its key, the
// file (nil when absent or unreadable as that ID's) and whether it is a live
// record of the op's incarnation.
func (r *Records) branchDef(ctx context.Context, op jsonld.BranchOp) (driver.ID, layout.File, *object, bool, error) {
	id, err := driver.ParseID(op.Branch)
	if err != nil {
		return id, layout.File{}, nil, false, fmt.Errorf("%s: %w: f:branchOps names %q: %v", r.cfg.Name, driver.ErrInternal, op.Branch, err)
	}
	files, err := r.files(id)
	if err != nil {
		return id, layout.File{}, nil, false, err
	}
	obj, err := r.get(ctx, files[0].Key)
	if err != nil || obj == nil {
		return id, files[0], nil, false, err
	}
	doc, derr := jsonld.Decode(obj.data)
	live := derr == nil && ownedBy(doc, id) && !doc.Purged && doc.Incarnation == op.Incarnation
	return id, files[0], obj, live, nil
}

// settleCreate settles a stale create: kept when the branch exists, else
// fenced (a mark with its token where it would be) and undone.
func (r *Records) settleCreate(ctx context.Context, op jsonld.BranchOp) (keep, done bool, err error) {
	for range maxAttempts {
		id, f, obj, live, err := r.branchDef(ctx, op)
		if err != nil || live {
			return live, err == nil, err
		}
		pc := ifAbsent()
		if obj != nil {
			doc, derr := jsonld.Decode(obj.data)
			if derr != nil || !doc.Purged || collectingNow(doc) || doc.Incarnation == op.Token {
				return false, true, nil // taken by another record, or fenced already
			}
			pc = ifMatch(obj.tag)
		}
		data, err := r.tombstone(id, op.Token)
		if err != nil {
			return false, false, err
		}
		if done, err := r.writeCAS(ctx, id, f, pc, data); err != nil || done {
			return false, err == nil, err
		}
	}
	return false, false, nil // contended: settled another time
}

// settleDrop settles a stale drop: the purge finished when the branch
// still carries its dropping entry, the count kept when the branch is gone,
// undone when the entry was cleared.
func (r *Records) settleDrop(ctx context.Context, op jsonld.BranchOp) (keep, done bool, err error) {
	id, _, obj, live, err := r.branchDef(ctx, op)
	if err != nil || !live {
		return true, err == nil, err
	}
	doc, _ := jsonld.Decode(obj.data)
	if !hasOp(op.Token)(doc) {
		return false, true, nil
	}
	err = r.purge(ctx, id, func(def *jsonld.File) error {
		if def == nil || !hasOp(op.Token)(def) {
			return errDropLost
		}
		return nil
	})
	switch {
	case err == nil, errors.Is(err, driver.ErrNotFound):
		return true, true, nil
	case errors.Is(err, errDropLost):
		return false, true, nil
	}
	return false, false, err
}

// settleDropping settles a stale dropping entry in branch b: cleared when
// its source holds no step of that drop (a source that does is settled
// itself, which finishes or undoes the drop).
func (r *Records) settleDropping(ctx context.Context, b *book, op jsonld.BranchOp) (keep, done bool, err error) {
	src := driver.ID{Name: b.id.Name, Branch: b.rec.SourceBranch}
	if b.rec.SourceBranch == "" || src == b.id {
		return false, true, nil
	}
	files, err := r.files(src)
	if err != nil {
		return false, false, err
	}
	s, err := r.readBook(ctx, src, files[0].Key)
	switch {
	case errors.Is(err, driver.ErrNotFound):
		return false, true, nil
	case err != nil:
		return false, false, err
	case s.has(op.Token):
		// The source's settler finishes or undoes the drop: run it.
		return false, false, r.bookkeep(ctx, src, func(*book) (bool, error) { return false, nil }, nil)
	}
	return false, true, nil
}

// ResetHead implements driver.Brancher: the index, then the head, each
// written by compare-and-set against the value read (so the monotonic rule
// does not apply), like any push of that concern. When the defining file
// holds an index inline that would still win over the one set (the merge
// rule), it is removed from there. The record returned is the one read
// first.
func (r *Records) ResetHead(ctx context.Context, id driver.ID, head driver.Value, index *driver.Value) (*driver.Record, error) {
	if err := r.begin(ctx); err != nil {
		return nil, err
	}
	prev, err := r.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if prev.Kind != driver.Ledger {
		return nil, fmt.Errorf("%s: %w: %s is a %s and has no head", r.cfg.Name, driver.ErrWrongKind, id, prev.Kind)
	}
	if index != nil {
		if err := r.force(ctx, id, driver.Index, *index); err != nil {
			return nil, err
		}
		if err := r.dropInlineIndex(ctx, id, *index); err != nil {
			return nil, err
		}
	}
	return prev, r.force(ctx, id, driver.Head, head)
}

// force sets concern c of id to v whatever its value, by compare-and-set
// against the value read.
func (r *Records) force(ctx context.Context, id driver.ID, c driver.Concern, v driver.Value) error {
	for range maxAttempts {
		rec, err := r.Get(ctx, id)
		if err != nil {
			return err
		}
		out, err := r.Update(ctx, id, c, driver.IfEquals(*rec.Value(c)), v)
		if err != nil || out.Applied {
			return err
		}
	}
	return r.contended(id, c)
}

// dropInlineIndex rewrites the defining file of id without its inline
// index while that index, not index, is what readers merge (the inline
// one wins when its t is higher, and when index is unborn).
func (r *Records) dropInlineIndex(ctx context.Context, id driver.ID, index driver.Value) error {
	files, err := r.files(id)
	if err != nil {
		return err
	}
	f := files[0]
	for range maxAttempts {
		rec, err := r.Get(ctx, id)
		if err != nil || rec.Index.Equal(index) {
			return err
		}
		def, err := r.readDoc(ctx, id, f.Key)
		if err != nil || def == nil || def.doc.Index == nil {
			return r.orNotFound(err, id)
		}
		own, err := jsonld.Assemble(id, def.doc)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", r.cfg.Name, f.Key, err)
		}
		data, err := jsonld.Encode(own, jsonld.EncodeOptions{Dialect: r.cfg.Dialect, Parts: f.Parts, Prev: def.doc.WithoutIndex()})
		if err != nil {
			return fmt.Errorf("%s: %s: %w", r.cfg.Name, f.Key, err)
		}
		if _, err := r.writeCAS(ctx, id, f, ifMatch(def.tag), data); err != nil {
			return err
		}
	}
	return r.contended(id, driver.Index)
}
