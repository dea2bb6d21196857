package nameservice

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/text"
	"nameservice.dev/nameservice/model"
)

// BranchPoint is the commit a branch was created at (Meta.BranchPoint).
type BranchPoint = model.BranchPoint

// BranchOptions says where CreateBranch starts a branch.
type BranchOptions struct {
	// From is the source branch, of the same ledger name; "main" when "".
	From string
	// At, when not nil, is the commit the branch starts at (an address and
	// its t, at most the source's commit_t) instead of the source's head.
	// The record keeps it as its BranchPoint.
	At *Ref
}

// ResetOptions says what ResetHead does with the index.
type ResetOptions struct {
	// Index, when not nil, is the index head to set with the commit head.
	Index *Ref
	// ClearIndex sets the index unborn (index_t 0). Without it or Index,
	// the index is left as it is.
	ClearIndex bool
}

// CreateBranch creates ledger id (name:branch) as a branch of name:From, and
// adds one to the source's branch count in the same atomic step (one
// DynamoDB transaction; the conditional-write protocol of files, object and
// document stores). The branch starts at the source's head, or at opts.At,
// with its index and config unborn and status v1 ready, and records its
// source (and At as its branch point). It returns the record created.
//
// It returns an error wrapping ErrAlreadyExists when id is taken, retracted
// or not; ErrNotFound when the source does not exist, is retracted or has no
// commit yet (and no At is given); ErrWrongKind when the source is a graph
// source; ErrInvalidID for a branch name Fluree refuses ('@', over 128
// bytes, or a rule of ParseID); ErrInvalidArgument for a malformed At or one
// beyond the source's head; ErrUnsupported when the driver has no branches.
func (ns *NameService) CreateBranch(ctx context.Context, id string, opts BranchOptions) (*Record, error) {
	const op = "create branch"
	pid, err := parseNew(op, id)
	if err != nil {
		return nil, err
	}
	rec, err := ns.branchRecord(ctx, pid, opts.From, opts.At)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", op, pid, err)
	}
	created, err := ns.createBranch(ctx, rec)
	if err != nil {
		return nil, wrap(op, pid, resentBranchOp(ctx, err, model.ErrAlreadyExists))
	}
	return created, nil
}

// resentBranchOp returns err, or an error wrapping ErrOutcomeUnknown when
// the branch operation was a resend (see driver.Write) refused with
// refusal: the earlier attempt may be what the ID was taken, or dropped, by.
// Every Brancher of this module resolves resends itself (driver.Write);
// this keeps one that does not from answering a landed write as refused.
func resentBranchOp(ctx context.Context, err, refusal error) error {
	if w, ok := driver.WriteFrom(ctx); ok && w.Resend && errors.Is(err, refusal) {
		return driver.OutcomeUnknown("a resend was refused (%v), perhaps because an earlier attempt landed", err)
	}
	return err
}

// branchRecord reads the source, name:from (main by default), and returns
// the record of the new branch.
func (ns *NameService) branchRecord(ctx context.Context, id model.ID, from string, at *Ref) (*Record, error) {
	src, err := model.ParseID(id.Name + ":" + cmp.Or(from, model.DefaultBranch))
	if err != nil {
		return nil, fmt.Errorf("source branch: %w", err)
	}
	if src == id {
		return nil, fmt.Errorf("%w: a branch cannot be its own source", model.ErrInvalidArgument)
	}
	s, err := ns.Get(ctx, src)
	switch {
	case err != nil:
		return nil, fmt.Errorf("source: %w", err)
	case s.Kind != model.Ledger:
		return nil, fmt.Errorf("%w: source %s is a %s, which has no branches", model.ErrWrongKind, src, s.Kind)
	case s.Retracted:
		return nil, fmt.Errorf("%w: source %s is retracted", model.ErrNotFound, src)
	}
	rec := model.NewLedger(id, ns.now().Unix())
	rec.SourceBranch = src.Branch
	head := *s.Head
	if at != nil {
		head = at.Value()
		if err := checkRef(head); err != nil {
			return nil, fmt.Errorf("at: %w", err)
		}
		if head.V > s.Head.V {
			return nil, fmt.Errorf("%w: at t %d is beyond the head of %s (commit_t %d)", model.ErrInvalidArgument, head.V, src, s.Head.V)
		}
		rec.BranchPoint = &model.BranchPoint{Address: at.Address, T: at.T}
	} else if head.Unborn() {
		return nil, fmt.Errorf("%w: source %s has no commit yet to branch from", model.ErrNotFound, src)
	}
	rec.Head = &head
	return rec, nil
}

// DropBranch removes ledger id and subtracts one from its source's branch
// count (never below 0) in the same atomic step. Unlike Purge it is refused
// while branches of id exist: it returns an error wrapping ErrHasBranches
// that names how many. It returns an error wrapping ErrNotFound for an
// unknown ID, ErrWrongKind for a graph source, ErrUnsupported when the
// driver has no branches. A record without a source (main) and without
// branches is dropped like any other.
func (ns *NameService) DropBranch(ctx context.Context, id string) error {
	return onID("drop branch", id, func(pid model.ID) error {
		return resentBranchOp(ctx, ns.dropBranch(ctx, pid), model.ErrNotFound)
	})
}

// ListBranches yields every branch of ledger name (every ledger record
// name:*, retracted ones included, since they still count in their source)
// in ID order, as List does: each record carries its source branch, head
// and branch count. name is a ledger name without a branch.
func (ns *NameService) ListBranches(ctx context.Context, name string) iter.Seq2[*Record, error] {
	if strings.Contains(name, ":") {
		return fail(fmt.Errorf("list branches: %w: %q is an ID; give the ledger name alone", model.ErrInvalidArgument, text.Clip(name, 80)))
	}
	if _, err := model.ParseID(name); err != nil {
		return fail(fmt.Errorf("list branches: %w", err))
	}
	return ns.List(ctx, ListOptions{Kind: model.Ledger, Prefix: name + ":", IncludeRetracted: true})
}

func fail(err error) iter.Seq2[*Record, error] {
	return func(yield func(*Record, error) bool) { yield(nil, err) }
}

// ResetHead sets the commit head of ledger id to commit, and its index as
// opts says, whatever the current watermarks: the one operation that moves
// a head back (Fluree uses it to roll a branch back after a failed rebase).
// It is an administrator's tool: the HTTP service allows it only to tokens
// with the admin scope and logs every use. It returns the record as it was
// just before. It returns an error wrapping ErrNotFound for an unknown ID,
// ErrWrongKind for a graph source, ErrInvalidArgument for a malformed ref
// or both opts.Index and opts.ClearIndex, ErrUnsupported when the driver
// cannot reset heads.
func (ns *NameService) ResetHead(ctx context.Context, id string, commit Ref, opts ResetOptions) (*Record, error) {
	return byID("reset head", id, func(pid model.ID) (*Record, error) {
		head := commit.Value()
		if err := checkRef(head); err != nil {
			return nil, err
		}
		var index *Value
		switch {
		case opts.Index != nil && opts.ClearIndex:
			return nil, fmt.Errorf("%w: give an index or clear it, not both", model.ErrInvalidArgument)
		case opts.Index != nil:
			v := opts.Index.Value()
			if err := checkRef(v); err != nil {
				return nil, fmt.Errorf("index: %w", err)
			}
			index = &v
		case opts.ClearIndex:
			index = &Value{}
		}
		return ns.resetHead(ctx, pid, head, index)
	})
}
