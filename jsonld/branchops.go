package jsonld

import (
	"encoding/json"
	"fmt"
)

// BranchOp is a branch create or drop under way, recorded in its source's
// defining file as an entry of f:branchOps by the object-store protocol
// (internal/objstore): the count f:branches already holds its Delta, and a
// writer that finds it older than the protocol allows settles it.
type BranchOp struct {
	Op     string `json:"op"`     // BranchCreate or BranchDrop
	Branch string `json:"branch"` // the branch's ID
	// Token is the branch's incarnation: the one a create gives the new
	// record, or the one of the record a drop removes.
	Token string `json:"token"`
	At    int64  `json:"at"`    // Unix milliseconds, when it was recorded
	Delta int64  `json:"delta"` // what it added to f:branches: 1, -1 or 0
}

// The kinds of BranchOp.
const (
	BranchCreate = "create"
	BranchDrop   = "drop"
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
	for _, op := range ops {
		if (op.Op != BranchCreate && op.Op != BranchDrop) || op.Branch == "" || op.Token == "" {
			return fmt.Errorf("branchOps holds an entry without a known op, a branch and a token")
		}
	}
	r.f.BranchOps = ops
	return nil
}
