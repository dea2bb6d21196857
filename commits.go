package nameservice

import (
	"context"

	"nameservice.dev/nameservice/driver"
)

// CommitEntry is one entry of Fluree's commit index: a commit's t and
// content ID.
type CommitEntry = driver.CommitEntry

// PendingCommitCIDs returns the entries of ledger id's commit index with t
// above sinceT, ascending by t: Fluree's pending_commit_cids, which its
// indexer calls to find the commits since its last index. ok is false when
// there is no usable index for id (the caller walks the commit chain
// instead). The index is Fluree v4's, kept beside the record by the
// DynamoDB and file drivers, which add an entry for each commit head
// published as a content ID, as Fluree does (see driver.CommitIndexer); it
// is an accelerator, not the truth. It returns an error wrapping
// ErrUnsupported for another driver, ErrInvalidID for a malformed ID.
func (ns *NameService) PendingCommitCIDs(ctx context.Context, id string, sinceT int64) ([]CommitEntry, bool, error) {
	const op = "pending commit cids"
	pid, err := parse(op, id)
	if err != nil {
		return nil, false, err
	}
	entries, ok, err := ns.pendingCommitCIDs(ctx, pid, sinceT)
	return entries, ok, wrap(op, pid, err)
}

// PruneCommitIndex removes the entries of ledger id's commit index with t
// at or below upToT: Fluree's prune_commit_index, which its indexer calls
// once an index covers them. Errors are PendingCommitCIDs'.
func (ns *NameService) PruneCommitIndex(ctx context.Context, id string, upToT int64) error {
	const op = "prune commit index"
	pid, err := parse(op, id)
	if err != nil {
		return err
	}
	return wrap(op, pid, ns.pruneCommitIndex(ctx, pid, upToT))
}
