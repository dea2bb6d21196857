package objstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// settle returns b's entries and count with its steps recorded more than
// staleAfter ago settled (b itself is left as it was).
func settle(ctx context.Context, r *Records, b *book) ([]jsonld.BranchOp, int64, error) {
	stale := time.Now().Add(-staleAfter).UnixMilli()
	out := &book{Ops: b.Ops, Branches: b.Branches}
	for _, op := range b.Ops {
		if op.At > stale {
			continue
		}
		var keep, done bool
		var err error
		switch op.Op {
		case jsonld.BranchCreate:
			keep, done, err = settleCreate(ctx, r, op)
		case jsonld.BranchDrop:
			keep, done, err = settleDrop(ctx, r, op)
		case jsonld.BranchDropping:
			done, err = settleDropping(ctx, r, b, op)
		}
		if err != nil {
			return nil, 0, err
		}
		if done {
			out.remove(op.Token, !keep)
		}
	}
	return out.Ops, out.Branches, nil
}

func parseBranch(r *Records, op jsonld.BranchOp) (model.ID, error) {
	id, err := model.ParseID(op.Branch)
	if err != nil {
		return id, fmt.Errorf("%s: %w: a branch step names %q: %v", r.cfg.Name, model.ErrInternal, op.Branch, err)
	}
	return id, nil
}

// settleCreate settles a stale create: kept when the branch exists, else
// fenced and undone.
func settleCreate(ctx context.Context, r *Records, op jsonld.BranchOp) (keep, done bool, err error) {
	id, err := parseBranch(r, op)
	if err != nil {
		return false, false, err
	}
	state, _, err := r.stateOf(ctx, id, op.Incarnation)
	if err != nil || exists(state) {
		return exists(state), err == nil, err
	}
	if err := r.fence(ctx, id, op.Incarnation); err != nil {
		return false, false, err
	}
	// A create that landed before the fence: keep it.
	state, _, err = r.stateOf(ctx, id, op.Incarnation)
	return exists(state), err == nil, err
}

// settleDrop settles a stale drop: the purge finished when the branch still
// carries its dropping entry, the count kept when the branch is gone,
// undone when the entry was cleared.
func settleDrop(ctx context.Context, r *Records, op jsonld.BranchOp) (keep, done bool, err error) {
	id, err := parseBranch(r, op)
	if err != nil {
		return false, false, err
	}
	state, ops, err := r.stateOf(ctx, id, op.Incarnation)
	if err != nil || !exists(state) {
		return true, err == nil, err
	}
	if !has(ops, op.Token) {
		return false, true, nil
	}
	err = r.purgeChecked(ctx, id, requireOp(op.Token))
	switch {
	case err == nil, errors.Is(err, model.ErrNotFound):
		return true, true, nil
	case errors.Is(err, errDropLost):
		return false, true, nil
	}
	return false, false, err
}

// settleDropping settles a stale dropping entry of branch b: cleared when
// its source holds no step of that drop, else the source is settled.
func settleDropping(ctx context.Context, r *Records, b *book, op jsonld.BranchOp) (done bool, err error) {
	src := model.ID{Name: b.ID.Name, Branch: b.Record.SourceBranch}
	if b.Record.SourceBranch == "" || src == b.ID {
		return true, nil
	}
	sb, err := r.readBook(ctx, src)
	switch {
	case errors.Is(err, model.ErrNotFound):
		return true, nil
	case err != nil:
		return false, err
	case has(sb.Ops, op.Token):
		return false, bookkeep(ctx, r, src, func(*book) (bool, error) { return false, nil }, nil)
	}
	return true, nil
}

// resetHead is a driver.Brancher's ResetHead made of Get and compare-and-set
// Updates of d (so the monotonic rule does not apply): the index (when
// given), then afterIndex (when not nil), then the head. It returns the
// record as read first.
func resetHead(ctx context.Context, d driver.Driver, id model.ID, head model.Value, index *model.Value, afterIndex func(context.Context) error) (*model.Record, error) {
	prev, err := d.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if prev.Kind != model.Ledger {
		return nil, fmt.Errorf("%w: %s is a %s and has no head to reset", model.ErrWrongKind, id, prev.Kind)
	}
	if index != nil {
		if err := force(ctx, d, id, model.Index, *index); err != nil {
			return nil, err
		}
		if afterIndex != nil {
			if err := afterIndex(ctx); err != nil {
				return nil, err
			}
		}
	}
	return prev, force(ctx, d, id, model.Head, head)
}

// force sets concern c of id to v whatever its value, by compare-and-set.
func force(ctx context.Context, d driver.Driver, id model.ID, c model.Concern, v model.Value) error {
	for range attempts {
		rec, err := d.Get(ctx, id)
		if err != nil {
			return err
		}
		out, err := d.Update(ctx, id, c, driver.IfEquals(*rec.Value(c)), v)
		if err != nil || out.Applied {
			return err
		}
	}
	return fmt.Errorf("%w: %s %s kept changing under %d attempts", model.ErrUnavailable, id, c, attempts)
}
