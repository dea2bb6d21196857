package driver

import (
	"context"

	"nameservice.dev/nameservice/model"
)

// Brancher is an optional capability: a driver that creates and drops
// branches together with the branch count of their source (Meta.Branches of
// the record ID{Name, SourceBranch}) in one atomic step, and resets heads.
// IDs and records passed in have been validated by the caller, as for
// Driver. Every method is safe for concurrent use and honours ctx.
//
// The count is exact: after any number of CreateBranch and DropBranch calls
// on one source, concurrent or not, from any number of clients, have
// returned, the source's Branches equals the creates that succeeded less the
// drops that succeeded, and it is never negative. A driver that cannot make
// the two writes one (files, object stores, document stores) records the
// step in the source before the first write and settles one left
// half-done by a writer that died on the next branch operation on that
// source, so that the count is exact again once it has run.
//
// Without it the NameService answers branch operations with an error
// wrapping ErrUnsupported, and the conformance suite's Branches group checks
// just that; every driver of this module has it (a store without
// multi-record transactions builds it on internal/branching).
type Brancher interface {
	// CreateBranch creates rec and adds one to the Branches of its source,
	// the record rec.ID.Name:rec.SourceBranch, in one atomic step, and
	// returns the record created: rec, unless the store builds it itself
	// (the http:// driver's server does, from rec's source and branch
	// point). rec is a ledger with SourceBranch set and Branches 0. It
	// returns an error wrapping ErrAlreadyExists when rec.ID is taken,
	// retracted or not; ErrNotFound when the source does not exist or is
	// retracted; and ErrWrongKind when the source is a graph source; and
	// then writes nothing.
	CreateBranch(ctx context.Context, rec *model.Record) (*model.Record, error)

	// DropBranch removes ledger id, as Delete does, and subtracts one from
	// its source's Branches (when it has a source that exists and a count
	// above 0), in one atomic step. It returns an error wrapping
	// ErrHasBranches, naming the count, while id's own Branches is above 0
	// (or a branch of it is being created or dropped); ErrNotFound when
	// there is no record; ErrWrongKind for a graph source; and then writes
	// nothing.
	DropBranch(ctx context.Context, id model.ID) error

	// ResetHead sets the head of ledger id to head and, when index is not
	// nil, its index to *index, whatever the current watermarks: the
	// monotonic rule of Update does not apply. It returns the record as it
	// was just before (the values it replaced). A driver that cannot write
	// the two at once writes the index first. It returns an error wrapping
	// ErrNotFound when there is no record and ErrWrongKind for a graph
	// source. It is never called with a resend (Write.Resend): the
	// NameService answers those outcome unknown.
	ResetHead(ctx context.Context, id model.ID, head model.Value, index *model.Value) (*model.Record, error)
}
