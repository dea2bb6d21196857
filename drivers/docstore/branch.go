package docstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"gocloud.dev/gcerrors"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/branching"
	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// Branches follow the protocol of internal/branching. A record's
// bookkeeping (branches and the steps under way, branch_ops) lives in its
// meta document, written by revision like every other write of it; a
// record's generation is its incarnation. A create in state creating is
// pending; a fence removes its claim by revision, so that its commit (by
// revision) fails.

var _ driver.Brancher = (*Driver)(nil)

// CreateBranch implements driver.Brancher (internal/branching).
func (d *Driver) CreateBranch(ctx context.Context, rec *model.Record) (*model.Record, error) {
	if err := d.begin(ctx); err != nil {
		return nil, err
	}
	if err := branching.CreateBranch(ctx, branchStore{d}, rec); err != nil {
		return nil, err
	}
	return rec, nil
}

// DropBranch implements driver.Brancher (internal/branching).
func (d *Driver) DropBranch(ctx context.Context, id model.ID) error {
	if err := d.begin(ctx); err != nil {
		return err
	}
	return branching.DropBranch(ctx, branchStore{d}, id)
}

// ResetHead implements driver.Brancher: the index, then the head, each set
// by compare-and-set against the value read (branching.Reset).
func (d *Driver) ResetHead(ctx context.Context, id model.ID, head model.Value, index *model.Value) (*model.Record, error) {
	if err := d.begin(ctx); err != nil {
		return nil, err
	}
	prev, err := branching.Reset(ctx, d, id, head, index, nil)
	if err != nil {
		return nil, fmt.Errorf("docstore: reset head: %w", err)
	}
	return prev, nil
}

// branchStore is the branching.Store of a Driver.
type branchStore struct{ d *Driver }

func (branchStore) Name() string { return "docstore" }

// ReadBook reads the meta and status documents of id; Book.Version is the
// meta document.
func (s branchStore) ReadBook(ctx context.Context, id model.ID) (*branching.Book, error) {
	meta, status, err := s.d.readConcern(ctx, id, model.Status)
	if err != nil {
		return nil, err
	}
	mid, m, err := meta.meta()
	if err != nil {
		return nil, err
	}
	m.Retracted = status.Retracted
	ops, err := meta.branchOps()
	if err != nil {
		return nil, err
	}
	return &branching.Book{ID: id, Record: &model.Record{ID: mid, Meta: m}, Incarnation: meta.Gen, Ops: ops, Branches: meta.Branches, Version: meta}, nil
}

// branchOps decodes the meta document's branch_ops.
func (d *document) branchOps() ([]jsonld.BranchOp, error) {
	if d.BranchOps == "" {
		return nil, nil
	}
	var ops []jsonld.BranchOp
	err := json.Unmarshal([]byte(d.BranchOps), &ops)
	if err == nil {
		err = jsonld.CheckBranchOps(ops)
	}
	if err != nil {
		return nil, fmt.Errorf("docstore: %w: meta document %s: branch_ops: %v", model.ErrInternal, d.PK, err)
	}
	return ops, nil
}

// WriteBook replaces the meta document b was read from, by revision.
func (s branchStore) WriteBook(ctx context.Context, b *branching.Book, landed func([]jsonld.BranchOp) bool) (bool, error) {
	next := *b.Version.(*document)
	next.Branches, next.BranchOps, next.W = b.Branches, "", driverutil.Token()
	if len(b.Ops) > 0 {
		ops, err := json.Marshal(b.Ops)
		if err != nil {
			return false, fmt.Errorf("docstore: %w: %v", model.ErrInternal, err)
		}
		next.BranchOps = string(ops)
	}
	err := s.d.coll.Replace(ctx, &next)
	switch {
	case err == nil:
		return true, nil
	case gcerrors.Code(err) == gcerrors.FailedPrecondition || gcerrors.Code(err) == gcerrors.NotFound:
		return false, nil
	case !retryable(ctx, err):
		return false, fmt.Errorf("docstore: write %s: %w", b.ID, classify(ctx, err))
	}
	// The answer may hide a write that landed.
	cur, rerr := s.d.getOne(ctx, &next)
	if rerr != nil || cur == nil || cur.State != stateLive {
		return false, rerr
	}
	ops, oerr := cur.branchOps()
	return cur.W == next.W || (oerr == nil && landed != nil && landed(ops)), nil
}

// Branch reads the meta document of id: Live or Pending (creating) when it
// is of generation inc.
func (s branchStore) Branch(ctx context.Context, id model.ID, inc string) (branching.State, []jsonld.BranchOp, error) {
	meta, err := s.d.getOne(ctx, keyDoc(id, skMeta))
	if err != nil || meta == nil || meta.Gen != inc {
		return branching.Gone, nil, err
	}
	switch meta.State {
	case stateLive:
		ops, err := meta.branchOps()
		return branching.Live, ops, err
	case stateCreating:
		return branching.Pending, nil, nil
	}
	return branching.Gone, nil, nil
}

// Fence removes, by revision, the claim of a create of id with generation
// inc: its commit, by revision, then fails.
func (s branchStore) Fence(ctx context.Context, id model.ID, inc string) error {
	meta, err := s.d.getOne(ctx, keyDoc(id, skMeta))
	if err != nil || meta == nil || meta.Gen != inc || meta.State != stateCreating {
		return err
	}
	_ = s.d.coll.Delete(ctx, meta) // by revision; a failure shows in the next read
	return nil
}

// Create creates rec with generation inc before deadline.
func (s branchStore) Create(ctx context.Context, rec *model.Record, inc string, deadline time.Time) error {
	return s.d.create(ctx, rec, inc, deadline)
}

// Purge deletes id (see Delete), conditional on check accepting the
// entries of the meta document it marks.
func (s branchStore) Purge(ctx context.Context, id model.ID, check func([]jsonld.BranchOp) error) error {
	return s.d.purge(ctx, id, func(meta *document) error {
		ops, err := meta.branchOps()
		if err != nil {
			return err
		}
		return check(ops)
	})
}
