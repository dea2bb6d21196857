package model

import (
	"bytes"
	"encoding/json"
	"fmt"

	"nameservice.dev/nameservice/internal/text"
)

// recordJSON fixes the field order of the record JSON form.
type recordJSON struct {
	ID           string           `json:"id"`
	Kind         Kind             `json:"kind"`
	Name         string           `json:"name"`
	Branch       string           `json:"branch"`
	Retracted    bool             `json:"retracted"`
	SourceType   string           `json:"source_type,omitempty"`
	Dependencies []string         `json:"dependencies,omitzero"` // [] and absent stay apart
	CreatedAt    int64            `json:"created_at,omitempty"`
	Head         *valueJSON       `json:"head,omitempty"`
	Index        *valueJSON       `json:"index,omitempty"`
	Status       *valueJSON       `json:"status,omitempty"`
	Config       *valueJSON       `json:"config,omitempty"`
	SourceBranch string           `json:"source_branch,omitempty"`
	Branches     int64            `json:"branches,omitempty"`
	BranchPoint  *branchPointJSON `json:"branch_point,omitempty"`
}

type branchPointJSON struct {
	Address string `json:"address"`
	T       int64  `json:"t"`
}

type valueJSON struct {
	V       int64           `json:"v"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// MarshalJSON encodes v as {"v": N, "payload": {...}}, omitting the payload
// when v is unborn.
func (v Value) MarshalJSON() ([]byte, error) {
	j, err := toValueJSON(&v)
	if err != nil {
		return nil, err
	}
	return json.Marshal(j)
}

// UnmarshalJSON decodes the form MarshalJSON writes.
func (v *Value) UnmarshalJSON(b []byte) error {
	var j valueJSON
	if err := strictDecode(b, &j); err != nil {
		return fmt.Errorf("%w: value: %v", ErrInvalidArgument, err)
	}
	val, err := fromValueJSON(&j)
	if err != nil {
		return err
	}
	*v = *val
	return nil
}

func toValueJSON(v *Value) (*valueJSON, error) {
	if v == nil {
		return nil, nil
	}
	j := &valueJSON{V: v.V}
	if v.Payload != nil {
		b, err := v.Payload.MarshalJSON()
		if err != nil {
			return nil, err
		}
		j.Payload = b
	}
	return j, nil
}

func fromValueJSON(j *valueJSON) (*Value, error) {
	if j == nil {
		return nil, nil
	}
	v := &Value{V: j.V}
	if len(j.Payload) > 0 {
		p, err := ParseObject(j.Payload)
		if err != nil {
			return nil, err
		}
		v.Payload = p
	}
	return v, nil
}

// MarshalJSON encodes r in the record JSON form: a fixed field order, absent
// concerns omitted, payload keys in a stable order.
func (r *Record) MarshalJSON() ([]byte, error) {
	j := recordJSON{
		ID: r.ID.String(), Kind: r.Kind, Name: r.ID.Name, Branch: r.ID.Branch,
		Retracted: r.Retracted, SourceType: r.SourceType, Dependencies: r.Dependencies,
		CreatedAt: r.CreatedAt, SourceBranch: r.SourceBranch, Branches: r.Branches,
		BranchPoint: (*branchPointJSON)(r.BranchPoint),
	}
	var err error
	for i, dst := range [...]**valueJSON{&j.Head, &j.Index, &j.Status, &j.Config} { // in Concerns order
		if *dst, err = toValueJSON(r.Value(Concerns[i])); err != nil {
			return nil, fmt.Errorf("record %s: %w", r.ID, err)
		}
	}
	return json.Marshal(j)
}

// UnmarshalJSON decodes the record JSON form. It returns an error wrapping
// ErrInvalidArgument (or ErrInvalidID) naming the problem when a field is
// unknown or malformed, name and branch disagree with id, or the record breaks
// an invariant of Validate.
func (r *Record) UnmarshalJSON(b []byte) error {
	var j recordJSON
	if err := strictDecode(b, &j); err != nil {
		return fmt.Errorf("%w: record: %v", ErrInvalidArgument, err)
	}
	id, err := ParseID(j.ID)
	if err != nil {
		return err
	}
	if (j.Name != "" && j.Name != id.Name) || (j.Branch != "" && j.Branch != id.Branch) {
		return fmt.Errorf("%w: record %s: name %q and branch %q disagree with the id", ErrInvalidArgument, id, j.Name, j.Branch)
	}
	rec := Record{ID: id, Meta: Meta{
		Kind: j.Kind, Retracted: j.Retracted, SourceType: j.SourceType, Dependencies: j.Dependencies,
		CreatedAt: j.CreatedAt, SourceBranch: j.SourceBranch, Branches: j.Branches,
		BranchPoint: (*BranchPoint)(j.BranchPoint),
	}}
	for i, vj := range [...]*valueJSON{j.Head, j.Index, j.Status, j.Config} { // in Concerns order
		if *rec.slot(Concerns[i]), err = fromValueJSON(vj); err != nil {
			return fmt.Errorf("record %s: %w", id, err)
		}
	}
	if err := rec.Validate(); err != nil {
		return err
	}
	*r = rec
	return nil
}

func strictDecode(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("data after the JSON value")
	}
	return nil
}

// Validate returns an error wrapping ErrInvalidArgument (or ErrInvalidID)
// that names the first broken invariant: a valid ID and kind; a ledger has all
// four concerns and a graph source all but head; an unborn value is at v0 and
// status is never unborn; a born head or index is {address, t} with t equal
// to its watermark; a born status has a string state; watermarks are not
// negative; the branch count is not negative and a branch point belongs to
// a branch (SourceBranch set) with an address and a t from 1.
func (r *Record) Validate() error {
	if err := r.ID.Validate(); err != nil {
		return err
	}
	switch bp := r.BranchPoint; {
	case !r.Kind.Valid():
		return fmt.Errorf("%w: record %s: kind %q is neither ledger nor graph_source", ErrInvalidArgument, r.ID, r.Kind)
	case r.Branches < 0:
		return fmt.Errorf("%w: record %s: branches %d is negative", ErrInvalidArgument, r.ID, r.Branches)
	case bp != nil && r.SourceBranch == "":
		return fmt.Errorf("%w: record %s: a branch point without a source branch", ErrInvalidArgument, r.ID)
	case bp != nil && (bp.Address == "" || bp.T < 1):
		return fmt.Errorf("%w: record %s: branch point needs an address and a t from 1 (got %q at %d)", ErrInvalidArgument, r.ID, text.Clip(bp.Address, maxEchoedID), bp.T)
	}
	for _, c := range Concerns {
		v := r.Value(c)
		switch want := c.AppliesTo(r.Kind); {
		case want && v == nil:
			return fmt.Errorf("%w: record %s: a %s must have a %s", ErrInvalidArgument, r.ID, r.Kind, c)
		case !want && v != nil:
			return fmt.Errorf("%w: record %s: a %s has no %s", ErrInvalidArgument, r.ID, r.Kind, c)
		case v != nil:
			if err := v.Validate(c); err != nil {
				return fmt.Errorf("record %s: %w", r.ID, err)
			}
		}
	}
	return nil
}

// Validate returns an error wrapping ErrInvalidArgument when v is not a
// well-formed value of concern c (see Record.Validate).
func (v Value) Validate(c Concern) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrInvalidArgument, c, fmt.Sprintf(format, args...))
	}
	if v.V < 0 {
		return bad("%s %d is negative", c.Watermark(), v.V)
	}
	if v.Payload == nil {
		if c == Status {
			return bad("status cannot be unborn")
		}
		if v.V != 0 {
			return bad("unborn at %s %d, want 0", c.Watermark(), v.V)
		}
		return nil
	}
	switch c {
	case Head, Index:
		ref, ok := v.Ref()
		if !ok || ref.Address == "" {
			return bad("payload must be {address: non-empty string, t: integer}, and an index may add graphs: {name: {address, t, rev} or null}")
		}
		if ref.T != v.V {
			return bad("payload t %d differs from %s %d", ref.T, c.Watermark(), v.V)
		}
		if err := validateGraphs(c, ref); err != nil {
			return bad("%v", err)
		}
	case Status:
		if _, ok := v.Payload["state"].(string); !ok || v.State() == "" {
			return bad("payload needs a non-empty string state")
		}
	}
	if v.V == 0 {
		return bad("a payload at %s 0; a born value starts above 0", c.Watermark())
	}
	return nil
}

// validateGraphs checks the named graphs of an index: the default graph is
// indexed at the index's own address and t, and every indexed graph has an
// address, a t above 0 and a revision of at least 0.
func validateGraphs(c Concern, ref Ref) error {
	if ref.Graphs == nil {
		return nil
	}
	if c != Index {
		return fmt.Errorf("only an index has named graphs")
	}
	def := ref.Graphs[DefaultGraph]
	if def == nil || def.Address != ref.Address || def.T != ref.T {
		return fmt.Errorf("graphs must hold %q indexed at the index's own address and t", DefaultGraph)
	}
	for name, g := range ref.Graphs {
		if name == "" {
			return fmt.Errorf("a named graph needs a name")
		}
		if g != nil && (g.Address == "" || g.T < 1 || g.Rev < 0) {
			return fmt.Errorf("graph %q: want a non-empty address, t >= 1 and rev >= 0", name)
		}
	}
	return nil
}
