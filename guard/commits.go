package guard

import (
	"context"
	"fmt"

	"nameservice.dev/nameservice/driver"
)

var _ driver.CommitIndexer = (*Driver)(nil)

// commitIndexer returns the commit index of the driver underneath, or an
// error wrapping ErrUnsupported when it keeps none.
func (g *Driver) commitIndexer(id driver.ID) (driver.CommitIndexer, error) {
	if err := id.Validate(); err != nil {
		return nil, err
	}
	ci, ok := g.d.(driver.CommitIndexer)
	if !ok {
		return nil, fmt.Errorf("%w: this backend's driver keeps no commit index (the DynamoDB and file drivers do)", driver.ErrUnsupported)
	}
	return ci, nil
}

// PendingCommitCIDs implements driver.CommitIndexer: id must be valid.
func (g *Driver) PendingCommitCIDs(ctx context.Context, id driver.ID, sinceT int64) ([]driver.CommitEntry, bool, error) {
	ci, err := g.commitIndexer(id)
	if err != nil {
		return nil, false, err
	}
	entries, ok, err := ci.PendingCommitCIDs(ctx, id, sinceT)
	return entries, ok, FromBackend(err)
}

// PruneCommitIndex implements driver.CommitIndexer: id must be valid.
func (g *Driver) PruneCommitIndex(ctx context.Context, id driver.ID, upToT int64) error {
	ci, err := g.commitIndexer(id)
	if err != nil {
		return err
	}
	return FromBackend(ci.PruneCommitIndex(ctx, id, upToT))
}
