package jsonld

import (
	"encoding/json"
	"fmt"
)

// BranchOp is a step of the object-store branch protocol
// (internal/objstore) under way, recorded as an entry of f:branchOps in a
// defining file: in a source's, a branch create or drop whose Delta the
// count f:branches already holds; in a branch's own, the mark of its drop.
// A writer that finds one older than the protocol allows settles it.
type BranchOp struct {
	Op     string `json:"op"`     // BranchCreate, BranchDrop or BranchDropping
	Branch string `json:"branch"` // the branch's ID
	Token  string `json:"token"`  // the step's random token
	// Incarnation is the branch record's incarnation: the one a create
	// gives the new record (its Token), or the one of the record a drop
	// removes.
	Incarnation string `json:"incarnation"`
	At          int64  `json:"at"`    // Unix milliseconds, when it was recorded
	Delta       int64  `json:"delta"` // what it added to f:branches: 1, -1 or 0
}

// The kinds of BranchOp.
const (
	BranchCreate   = "create"   // in the source: a branch is being created
	BranchDrop     = "drop"     // in the source: a branch is being dropped
	BranchDropping = "dropping" // in the branch itself: it is being dropped
)

// branchOps reads f:branchOps: a list of BranchOp objects.
func (r *reader) branchOps() error {
	v, ok := r.vals["branchOps"]
	if !ok || v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("branchOps: %v", err)
	}
	var ops []BranchOp
	if err := json.Unmarshal(b, &ops); err != nil {
		return fmt.Errorf("branchOps is not a list of {op, branch, token, at, delta}: %v", err)
	}
	if err := CheckBranchOps(ops); err != nil {
		return fmt.Errorf("branchOps: %v", err)
	}
	r.f.BranchOps = ops
	return nil
}

// CheckBranchOps returns an error unless every entry has a known op, a
// branch and a token.
func CheckBranchOps(ops []BranchOp) error {
	for _, op := range ops {
		if (op.Op != BranchCreate && op.Op != BranchDrop && op.Op != BranchDropping) || op.Branch == "" || op.Token == "" {
			return fmt.Errorf("an entry without a known op, a branch and a token")
		}
	}
	return nil
}
