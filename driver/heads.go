package driver

import (
	"context"

	"nameservice.dev/nameservice/model"
)

// HeadsReader is an optional capability: a driver that reads a ledger's
// head and index in one request cheaper than Get (on DynamoDB one Query of
// the two items, projected to the pointers). The portable API falls back
// to Get for a driver without it.
type HeadsReader interface {
	// Heads returns the head and index of ledger id, read strongly
	// consistently, retracted or not, as Get would return them. It returns
	// an error wrapping ErrNotFound when there is no record, ErrWrongKind
	// for a graph source (it has no head), and ErrUnsupported when this
	// store cannot read them apart from the record (the caller then uses
	// Get).
	Heads(ctx context.Context, id model.ID) (model.Heads, error)
}
