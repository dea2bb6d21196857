package mem

import (
	"context"
	"fmt"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/model"
)

var _ driver.Brancher = (*Driver)(nil)

// CreateBranch implements driver.Brancher under the store's lock.
func (d *Driver) CreateBranch(ctx context.Context, rec *model.Record) (*model.Record, error) {
	return locked(ctx, d, func(s *Store) (*model.Record, error) {
		w := driver.WriteOf(ctx)
		if w.Resend {
			return rec, resent("create branch", rec.ID, w, s.createdBy(rec.ID, w))
		}
		id := model.ID{Name: rec.ID.Name, Branch: rec.SourceBranch}
		src, err := s.record(id)
		switch {
		case err != nil:
			return nil, fmt.Errorf("mem: source: %w", err)
		case src.Kind != model.Ledger:
			return nil, fmt.Errorf("mem: %w: source %s is a %s", model.ErrWrongKind, id, src.Kind)
		case src.Retracted:
			return nil, fmt.Errorf("mem: %w: source %s is retracted", model.ErrNotFound, id)
		}
		if err := s.insert(rec, w); err != nil {
			return nil, err
		}
		src.Branches++
		return rec, nil
	})
}

// DropBranch implements driver.Brancher under the store's lock.
func (d *Driver) DropBranch(ctx context.Context, id model.ID) error {
	return d.run(ctx, func(s *Store) error {
		w := driver.WriteOf(ctx)
		if w.Resend {
			return resent("drop branch", id, w, s.purges[id] == w.ID)
		}
		r, err := s.record(id)
		switch {
		case err != nil:
			return err
		case r.Kind != model.Ledger:
			return fmt.Errorf("mem: %w: %s is a %s, not a branch", model.ErrWrongKind, id, r.Kind)
		case r.Branches > 0:
			return fmt.Errorf("mem: %w", &driverutil.BranchesError{ID: id, N: r.Branches})
		}
		if r.SourceBranch != "" {
			if src, ok := s.recs[model.ID{Name: id.Name, Branch: r.SourceBranch}]; ok && src.Branches > 0 {
				src.Branches--
			}
		}
		s.remove(r, w)
		return nil
	})
}

// ResetHead implements driver.Brancher under the store's lock.
func (d *Driver) ResetHead(ctx context.Context, id model.ID, head model.Value, index *model.Value) (*model.Record, error) {
	return locked(ctx, d, func(s *Store) (*model.Record, error) {
		r, err := s.record(id)
		if err != nil {
			return nil, err
		}
		if r.Kind != model.Ledger {
			return nil, fmt.Errorf("mem: %w: %s is a %s and has no head", model.ErrWrongKind, id, r.Kind)
		}
		prev := r.Clone()
		if index != nil {
			s.set(r, model.Index, *index)
		}
		s.set(r, model.Head, head)
		return prev, nil
	})
}

// set sets concern c of r to v and tells watchers when it changed. The
// caller holds s.mu.
func (s *Store) set(r *model.Record, c model.Concern, v model.Value) {
	old := *r.Value(c)
	r.SetValue(c, v.Clone())
	if !old.Equal(v) {
		s.notify(r.Kind, driver.Event{ID: r.ID, Concern: c, Old: old.V, New: v.Clone()})
	}
}
