package model

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Kind is what a record describes.
type Kind string

// The kinds of record.
const (
	Ledger      Kind = "ledger"
	GraphSource Kind = "graph_source"
)

// Valid reports whether k is Ledger or GraphSource.
func (k Kind) Valid() bool { return k == Ledger || k == GraphSource }

// Concern is one of the four independently updated parts of a record.
type Concern int

// The four concerns.
const (
	Head   Concern = iota // commit_t + {address, t}; ledgers only
	Index                 // index_t + {address, t}
	Status                // status_v + {state, ...}
	Config                // config_v + JSON object
)

// Concerns lists every concern, in record order.
var Concerns = []Concern{Head, Index, Status, Config}

var concernNames = [...]string{"head", "index", "status", "config"}
var watermarkNames = [...]string{"commit_t", "index_t", "status_v", "config_v"}

// String returns the concern's name: head, index, status or config.
func (c Concern) String() string {
	if c.Valid() {
		return concernNames[c]
	}
	return "concern(" + strconv.Itoa(int(c)) + ")"
}

// Watermark returns the name of the concern's watermark (commit_t, ...).
func (c Concern) Watermark() string {
	if c.Valid() {
		return watermarkNames[c]
	}
	return c.String()
}

// Valid reports whether c is one of the four concerns.
func (c Concern) Valid() bool { return c >= Head && c <= Config }

// ParseConcern returns the concern named s.
func ParseConcern(s string) (Concern, error) {
	if i := slices.Index(concernNames[:], s); i >= 0 {
		return Concern(i), nil
	}
	return 0, fmt.Errorf("%w: unknown concern %q (want head, index, status or config)", ErrInvalidArgument, s)
}

// ParseConcerns returns the concerns named in s, a comma-separated list
// ("head,index"); "" is none. It returns an error wrapping
// ErrInvalidArgument naming the first unknown one.
func ParseConcerns(s string) ([]Concern, error) {
	if s == "" {
		return nil, nil
	}
	var out []Concern
	for _, name := range strings.Split(s, ",") {
		c, err := ParseConcern(strings.TrimSpace(name))
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// FormatConcerns returns cs as ParseConcerns reads them.
func FormatConcerns(cs []Concern) string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.String()
	}
	return strings.Join(names, ",")
}

// AppliesTo reports whether a record of kind k has this concern.
func (c Concern) AppliesTo(k Kind) bool { return c != Head || k == Ledger }

// Value is one concern's state: a watermark and a payload. A nil payload
// means unborn (only head, index and config can be unborn, at V 0).
type Value struct {
	V       int64
	Payload Object
}

// Unborn reports whether v has no payload.
func (v Value) Unborn() bool { return v.Payload == nil }

// Equal reports whether v and w have the same watermark and payload.
func (v Value) Equal(w Value) bool { return v.V == w.V && v.Payload.Equal(w.Payload) }

// Clone returns a deep copy of v.
func (v Value) Clone() Value { return Value{V: v.V, Payload: v.Payload.Clone()} }

// String formats v for messages.
func (v Value) String() string {
	if v.Payload == nil {
		return fmt.Sprintf("v%d (unborn)", v.V)
	}
	b, _ := v.Payload.MarshalJSON()
	return fmt.Sprintf("v%d %s", v.V, b)
}

// Ref is the payload of a head or an index: an address and the t it covers.
// A ledger's index may also carry its named graphs; Address and T are then
// those of the default graph, so readers that know only one pointer see it.
type Ref struct {
	Address string
	T       int64
	Graphs  map[string]*GraphIndex // nil: no named graphs
}

// DefaultGraph is the named graph whose index is the index's own address
// and t.
const DefaultGraph = "default"

// GraphIndex is the index of one named graph: the address of its root, the
// t it covers and the revision at that t (0, 1, ... for rebuilds). A nil
// *GraphIndex in Ref.Graphs is a graph that exists but is not indexed yet.
type GraphIndex struct {
	Address string
	T       int64
	Rev     int64
}

// GraphsValue returns the index Value for named graphs: its address and t
// are those of graphs[DefaultGraph]. Value.Validate refuses it when the
// default graph is missing or not indexed.
func GraphsValue(graphs map[string]*GraphIndex) Value {
	r := Ref{Graphs: graphs}
	if def := graphs[DefaultGraph]; def != nil {
		r.Address, r.T = def.Address, def.T
	}
	return r.Value()
}

// Value returns the head or index Value of r: payload {address, t}, plus
// graphs (each {address, t, rev} or null) when r has named graphs.
func (r Ref) Value() Value {
	v := RefValue(r.Address, r.T)
	if r.Graphs == nil {
		return v
	}
	m := make(map[string]any, len(r.Graphs))
	for name, g := range r.Graphs {
		if g == nil {
			m[name] = nil
			continue
		}
		m[name] = map[string]any{"address": g.Address, "t": jsonInt(g.T), "rev": jsonInt(g.Rev)}
	}
	v.Payload["graphs"] = m
	return v
}

func jsonInt(n int64) json.Number { return json.Number(strconv.FormatInt(n, 10)) }

// RefValue returns the Value of a head or index pointing at address at t.
func RefValue(address string, t int64) Value {
	return Value{V: t, Payload: Object{"address": address, "t": jsonInt(t)}}
}

// Ref returns v's payload as a Ref; ok is false when v is unborn or its
// payload is not {address: string, t: integer} with, optionally, graphs: an
// object of {address: string, t: integer, rev: integer} or null entries.
func (v Value) Ref() (r Ref, ok bool) {
	if v.Payload == nil {
		return Ref{}, false
	}
	addr, okA := v.Payload["address"].(string)
	t, okT := v.Payload.Int("t")
	r = Ref{Address: addr, T: t}
	keys := 2
	if g, has := v.Payload["graphs"]; has {
		if r.Graphs, ok = parseGraphs(g); !ok {
			return r, false
		}
		keys++
	}
	return r, okA && okT && len(v.Payload) == keys
}

func parseGraphs(v any) (map[string]*GraphIndex, bool) {
	m, ok := v.(map[string]any)
	if o, isObj := v.(Object); isObj {
		m, ok = o, true
	}
	if !ok {
		return nil, false
	}
	out := make(map[string]*GraphIndex, len(m))
	for name, e := range m {
		if e == nil {
			out[name] = nil
			continue
		}
		em, ok := e.(map[string]any)
		if !ok {
			return nil, false
		}
		o := Object(em)
		addr, okA := o["address"].(string)
		t, okT := o.Int("t")
		rev, okR := o.Int("rev")
		if !okA || !okT || !okR || len(o) != 3 {
			return nil, false
		}
		out[name] = &GraphIndex{Address: addr, T: t, Rev: rev}
	}
	return out, true
}

// UnbornValue is the value of an unborn head, index or config.
func UnbornValue() Value { return Value{} }

// ReadyStatus is the status of a new record: v1 {state: ready}.
func ReadyStatus() Value { return Value{V: 1, Payload: Object{"state": "ready"}} }

// State returns the status payload's state, or "".
func (v Value) State() string { return v.Payload.String("state") }

// StateRetracted is the status state of a retracted record.
const StateRetracted = "retracted"

// Meta is a record's identity and bookkeeping, apart from its concerns.
type Meta struct {
	Kind         Kind
	Retracted    bool
	SourceType   string   // graph sources: e.g. "db:Bm25Index"
	Dependencies []string // graph sources: ledger IDs
	CreatedAt    int64    // Unix seconds; 0 when unknown
	SourceBranch string   // the branch this one was created from, if any
	Branches     int64    // how many branches were created from this one
	// BranchPoint is the commit a branch was created at when it was
	// created at a given commit rather than at its source's head; nil
	// otherwise (and on every record that is not a branch).
	BranchPoint *BranchPoint
}

// BranchPoint is the commit a branch starts at: its address and t.
type BranchPoint struct {
	Address string
	T       int64
}

// Record is everything the nameservice holds for one ID. A concern the
// record's kind does not have (head on a graph source) is nil.
type Record struct {
	ID ID
	Meta
	Head, Index, Status, Config *Value
}

// NewLedger returns an initialised ledger record: head, index and config
// unborn, status v1 ready.
func NewLedger(id ID, createdAt int64) *Record {
	h, i, s, c := UnbornValue(), UnbornValue(), ReadyStatus(), UnbornValue()
	return &Record{ID: id, Meta: Meta{Kind: Ledger, CreatedAt: createdAt}, Head: &h, Index: &i, Status: &s, Config: &c}
}

// NewGraphSource returns a graph-source record: index unborn, status v1
// ready, and config v1 holding config (or unborn when config is nil).
func NewGraphSource(id ID, sourceType string, deps []string, config Object, createdAt int64) *Record {
	i, s, c := UnbornValue(), ReadyStatus(), UnbornValue()
	if config != nil {
		c = Value{V: 1, Payload: config.Clone()}
	}
	return &Record{
		ID:    id,
		Meta:  Meta{Kind: GraphSource, SourceType: sourceType, Dependencies: slices.Clone(deps), CreatedAt: createdAt},
		Index: &i, Status: &s, Config: &c,
	}
}

// Value returns the record's value for c, or nil when the record has no such
// concern.
func (r *Record) Value(c Concern) *Value {
	if p := r.slot(c); p != nil {
		return *p
	}
	return nil
}

// SetValue sets the record's value for c.
func (r *Record) SetValue(c Concern, v Value) {
	if p := r.slot(c); p != nil {
		*p = &v
	}
}

// slot returns the field holding concern c, or nil for an invalid c.
func (r *Record) slot(c Concern) **Value {
	if !c.Valid() {
		return nil
	}
	return [...]**Value{&r.Head, &r.Index, &r.Status, &r.Config}[c]
}

// Clone returns a deep copy of r.
func (r *Record) Clone() *Record {
	if r == nil {
		return nil
	}
	c := *r
	c.Dependencies = slices.Clone(r.Dependencies)
	if r.BranchPoint != nil {
		c.BranchPoint = new(*r.BranchPoint)
	}
	for _, k := range Concerns {
		if v := r.Value(k); v != nil {
			c.SetValue(k, v.Clone())
		}
	}
	return &c
}

// RetractedStatus returns the status payload of a record retracted at at:
// {state: retracted, retracted_at: Unix seconds}.
func RetractedStatus(at time.Time) Object {
	return Object{"state": StateRetracted, "retracted_at": jsonInt(at.Unix())}
}

// Heads are a ledger's two pointers: its commit head and its index.
type Heads struct {
	Head  Value
	Index Value
}

// HeadsOf returns the heads of r, or an error wrapping ErrWrongKind when r
// is not a ledger.
func HeadsOf(r *Record) (Heads, error) {
	if r.Head == nil || r.Index == nil {
		return Heads{}, fmt.Errorf("%w: %s is a %s and has no head", ErrWrongKind, r.ID, r.Kind)
	}
	return Heads{Head: r.Head.Clone(), Index: r.Index.Clone()}, nil
}
