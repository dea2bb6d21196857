package nswire

// BranchRequest is the body of POST /ns/v1/branches/{id}: create branch id
// from From (main when "") at At (the source's head when nil). The answer
// is 201 with the record created.
type BranchRequest struct {
	From string `json:"from,omitempty"`
	At   *Ref   `json:"at,omitempty"`
}

// Ref is a commit or index pointer: an address and its t.
type Ref struct {
	Address string `json:"address"`
	T       int64  `json:"t"`
}

// ResetHeadRequest is the body of POST /ns/v1/reset-head/{id} (the admin
// scope): set the head to Commit and the index to Index, or unborn with
// ClearIndex, whatever the watermarks. The answer is 200 with the record as
// it was before.
type ResetHeadRequest struct {
	Commit     Ref  `json:"commit"`
	Index      *Ref `json:"index,omitempty"`
	ClearIndex bool `json:"clear_index,omitempty"`
}
