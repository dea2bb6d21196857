package driver

import (
	"context"

	"nameservice.dev/nameservice/model"
)

// CommitIndexer is an optional capability: a driver that keeps Fluree v4's
// commit index beside each ledger's record (the DynamoDB driver's
// "commit#<t>" rows, the file driver's {branch}.commits.jsonl), one entry
// per commit head published as a content ID, written as Fluree writes it
// after the head's update applied, best effort. Fluree's indexer reads it
// to find the commits since its last index without walking the commit
// chain, and checks what it reads: the index is never the truth, an entry
// may be missing (a write that failed) or left over (one whose head a
// later reset moved away).
type CommitIndexer interface {
	// PendingCommitCIDs returns the entries of ledger id with t above
	// sinceT, ascending by t: Fluree's pending_commit_cids. ok is false
	// when the driver has no usable index of id (none, or none above
	// sinceT, or an entry it cannot read, as Fluree's backend of the
	// same store decides): the caller must walk the commit chain instead.
	PendingCommitCIDs(ctx context.Context, id model.ID, sinceT int64) (entries []CommitEntry, ok bool, err error)

	// PruneCommitIndex removes the entries of ledger id with t at or below
	// upToT: Fluree's prune_commit_index, which its indexer calls once an
	// index covers them.
	PruneCommitIndex(ctx context.Context, id model.ID, upToT int64) error
}

// CommitEntry is one entry of a commit index: a commit's t and content ID.
type CommitEntry struct {
	T   int64  `json:"t"`
	CID string `json:"cid"`
}
