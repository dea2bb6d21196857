package jsonld

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"nameservice.dev/nameservice/internal/jsonx"
	"nameservice.dev/nameservice/model"
)

// ErrMalformed marks a file this codec cannot read. It wraps
// model.ErrInternal: to a driver, a stored file it cannot decode is an
// internal error.
var ErrMalformed = fmt.Errorf("malformed ns@v2 file: %w", model.ErrInternal)

// Part is a set of the parts of a record a file carries.
type Part uint8

// The parts of a record.
const (
	Identity   Part = 1 << iota // kind, name, branch, source type, dependencies, retracted, created_at, branch bookkeeping
	HeadPart                    // the commit head
	IndexPart                   // the index head
	StatusPart                  // the status
	ConfigPart                  // the config
)

// PartOf returns the part holding concern c.
func PartOf(c model.Concern) Part {
	if !c.Valid() {
		return 0
	}
	return HeadPart << c // the parts of the concerns are in model.Concerns order
}

// knownParts maps each member name of the vocabulary the codec reads to the
// part it belongs to.
var knownParts = map[string]Part{
	"ledger": Identity, "name": Identity, "branch": Identity, "graphSourceDependencies": Identity,
	"dependenciesAbsent": Identity,
	"retracted":          Identity, "createdAt": Identity, "sourceBranch": Identity, "branchPoint": Identity,
	"branches":     Identity,
	"ledgerCommit": HeadPart, "commitCid": HeadPart, "t": HeadPart,
	"ledgerIndex": IndexPart, "indexAddress": IndexPart, "indexT": IndexPart, "indexGraphs": IndexPart,
	"graphSourceIndex": IndexPart, "graphSourceIndexT": IndexPart,
	"status": StatusPart, "statusV": StatusPart, "statusMeta": StatusPart,
	"defaultContext": ConfigPart, "defaultContextCid": ConfigPart, "configCid": ConfigPart,
	"configV": ConfigPart, "configMeta": ConfigPart, "graphSourceConfig": ConfigPart,
	// marks of the object-store protocol, in no part (see File.Incarnation)
	"incarnation": 0, "purged": 0, "purgedAt": 0, "collectUntil": 0, "branchOps": 0, "writeIDs": 0,
}

// File is one decoded ns@v2 file: what it says about a record, and the
// members and context it was read from, so Encode can write back what this
// codec does not know.
type File struct {
	// ID is the file's @id, "" when it has none.
	ID string
	// Parts are the parts the file holds members of (@type counts as
	// Identity).
	Parts Part

	// Identity, when Parts has it. Kind is "" when the file does not say.
	Kind         model.Kind
	Name, Branch string   // from f:ledger / f:name and f:branch, "" when absent
	Classes      []string // the @type entries, vocabulary IRIs in "db:" form
	SourceType   string
	Dependencies []string
	Retracted    *bool // an explicit retracted flag; nil when absent
	CreatedAt    int64
	SourceBranch string
	Branches     int64
	// BranchPoint is f:branchPoint's commit (f:commitCid, f:t) when it
	// names one (t from 1); Fluree writes {f:source, f:t: 0} for a branch
	// created at its source's head.
	BranchPoint *model.BranchPoint

	// The concerns the file holds, with the defaults of docs/format.md; nil
	// when the file holds no member of that concern.
	Head, Index, Status, Config *model.Value

	// Incarnation is the token (f:incarnation: unique, the create's write
	// ID, or a branch step's random token) a create put in the defining file and every later write copies into the record's other
	// files, "" when the file has none (written by Fluree or by an older
	// version). A non-defining file whose token is not its defining file's
	// is debris of an earlier record of the same ID.
	Incarnation string
	// Purged (f:purged true) marks a tombstone: a file a purge sealed, or
	// the mark that replaced the defining file of a purged record.
	Purged bool
	// PurgedAt (f:purgedAt, Unix milliseconds) is when the purge sealed
	// the file; 0 when the file does not say (an older version wrote it).
	PurgedAt int64
	// CollectUntil (f:collectUntil, Unix milliseconds) marks a defining
	// file that a collector is removing: no writer replaces it before then.
	CollectUntil int64
	// BranchOps (f:branchOps) are the branch creates and drops under way
	// from this record, recorded by the object-store protocol.
	BranchOps []BranchOp
	// WriteIDs (f:writeIDs) are the entries of the last writes of this
	// file, newest first, at most MaxWriteIDs: each names a write (see
	// driver.Write) and what it did ("ID@v", "ID@retract", "ID@purge"), so
	// that an attempt whose answer was lost, or a resend from another
	// process, can find whether it landed.
	WriteIDs []string

	ctxRaw  json.RawMessage
	ctx     *jsonContext
	members []member
	locals  map[string]int // vocabulary name -> index in members
}

// Decode reads one ns@v2 file. It returns an error wrapping ErrMalformed
// (and so model.ErrInternal), saying what is wrong, when data is not a JSON
// object, a known member has the wrong shape, or two members mean the same
// thing. A zero-length file is the caller's business (it means "absent").
func Decode(data []byte) (*File, error) {
	f, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return f, nil
}

func decode(data []byte) (*File, error) {
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("not valid UTF-8") // encoding/json would rewrite it to U+FFFD
	}
	members, err := parseObject(data)
	if err != nil {
		return nil, err
	}
	f := &File{members: members, locals: map[string]int{}}
	if i := slices.IndexFunc(members, func(m member) bool { return m.key == "@context" }); i >= 0 {
		f.ctxRaw = members[i].raw // parseObject refuses a key given twice
	}
	if f.ctx, err = parseContext(f.ctxRaw); err != nil {
		return nil, err
	}
	r := &reader{f: f, vals: map[string]any{}}
	for i, m := range members {
		if err := r.member(i, m); err != nil {
			return nil, err
		}
	}
	for _, step := range []func() error{r.identity, r.head, r.index, r.status, r.config, r.marks} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// reader collects the known members of one file before turning them into
// values.
type reader struct {
	f    *File
	vals map[string]any // vocabulary name -> decoded value
}

func (r *reader) member(i int, m member) error {
	switch m.key {
	case "@context":
		return nil
	case "@id":
		s, ok := asString(mustValue(m.raw))
		if !ok {
			return fmt.Errorf("@id is not a string")
		}
		r.f.ID = s
		return nil
	case "@type":
		r.f.locals["@type"] = i
		v, err := value(m.raw)
		if err != nil {
			return fmt.Errorf("@type: %v", err)
		}
		list, ok := v.([]any)
		if !ok {
			list = []any{v}
		}
		for _, e := range list {
			s, ok := e.(string)
			if !ok {
				return fmt.Errorf("@type holds a %s, not a string", jsonx.Kind(e))
			}
			r.f.Classes = append(r.f.Classes, r.f.ctx.compactIRI(s))
		}
		r.f.Parts |= Identity
		return nil
	}
	name, ok := local(r.f.ctx.expandKey(m.key))
	if !ok {
		return nil
	}
	if j, dup := r.f.locals[name]; dup {
		return fmt.Errorf("members %q and %q both mean %s", r.f.members[j].key, m.key, name)
	}
	r.f.locals[name] = i
	part, known := knownParts[name]
	if !known {
		return nil
	}
	v, err := value(m.raw)
	if err != nil {
		return fmt.Errorf("%s: %v", m.key, err)
	}
	r.vals[name] = v
	r.f.Parts |= part
	return nil
}

// value decodes raw JSON into JSON-normal values (exact json.Numbers). A
// key repeated inside a member, or invalid UTF-8, is an error: the file is
// corrupt, and picking one of the values would hide it.
var value = jsonx.Decode

func mustValue(raw json.RawMessage) any {
	v, _ := value(raw)
	return v
}

// unwrap returns the @value of a JSON-LD value object, or v itself.
func unwrap(v any) any {
	if m, ok := v.(map[string]any); ok {
		if inner, ok := m["@value"]; ok {
			return inner
		}
	}
	return v
}

func asString(v any) (string, bool) {
	s, ok := unwrap(v).(string)
	return s, ok
}

// asInt reads an integer written as a number, a numeric string, or either
// inside {"@value"}.
func asInt(v any) (int64, bool) {
	v = unwrap(v)
	if s, ok := v.(string); ok {
		v = json.Number(s)
	}
	return jsonx.AsInt(v)
}

// asRef reads a pointer written as "address", {"@id": "address"} or
// {"@value": "address"}.
func asRef(v any) (string, bool) {
	if m, ok := v.(map[string]any); ok {
		if id, ok := m["@id"].(string); ok {
			return id, true
		}
	}
	return asString(v)
}

// asStrings reads a list of strings: an array, an {"@list": [...]}, or one
// string.
func asStrings(v any) ([]string, bool) {
	if m, ok := v.(map[string]any); ok {
		if l, ok := m["@list"]; ok {
			v = l
		}
	}
	if s, ok := asRef(v); ok {
		return []string{s}, true
	}
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(list))
	for _, e := range list {
		s, ok := asRef(e)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

func asObject(v any) (model.Object, bool) {
	m, ok := v.(map[string]any)
	return model.Object(m), ok
}

// str, integer, ref, object and boolean read one known member: ok is false when it
// is absent or null, err non-nil when it is present but not of the kind.
func (r *reader) str(name string) (string, bool, error) {
	return readAs(r, name, asString, "a string")
}

func (r *reader) integer(name string) (int64, bool, error) {
	return readAs(r, name, asInt, "an integer")
}

func (r *reader) ref(name string) (string, bool, error) {
	return readAs(r, name, asRef, `a string or {"@id": string}`)
}

func (r *reader) object(name string) (model.Object, bool, error) {
	return readAs(r, name, asObject, "an object")
}

func (r *reader) boolean(name string) (bool, bool, error) {
	return readAs(r, name, func(v any) (bool, bool) { b, ok := unwrap(v).(bool); return b, ok }, "a boolean")
}

// readAs reads member name with as; want names what as accepts, for the
// error.
func readAs[T any](r *reader, name string, as func(any) (T, bool), want string) (T, bool, error) {
	var zero T
	v, ok := r.vals[name]
	if !ok || v == nil {
		return zero, false, nil
	}
	x, ok := as(v)
	if !ok {
		return zero, false, fmt.Errorf("%s is a JSON %s, not %s", name, jsonx.Kind(v), want)
	}
	return x, true, nil
}

// nested returns the members of a known object member keyed by vocabulary
// name (keywords keep their "@" form).
func (r *reader) nested(name string) (map[string]any, error) {
	v, ok := r.vals[name]
	if !ok || v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s is a %s, not an object", name, jsonx.Kind(v))
	}
	out := make(map[string]any, len(m))
	for k, e := range m {
		iri := r.f.ctx.expandKey(k)
		if n, ok := local(iri); ok {
			iri = n
		}
		if _, dup := out[iri]; dup {
			return nil, fmt.Errorf("%s has two members meaning %s", name, iri)
		}
		out[iri] = e
	}
	return out, nil
}

// graphClasses are the @type entries that say "graph source" without
// naming its type; ledgerClasses say "ledger".
var (
	graphClasses  = []string{"db:IndexSource", "db:MappedSource", "db:GraphSource", "db:VirtualGraph"}
	ledgerClasses = []string{"db:LedgerSource", "db:Database", "db:Ledger"}
)

func (r *reader) identity() error {
	f := r.f
	var errs [9]error // every one is reported: errors.Join drops the nils
	var ledgerName, gsName string
	var absent, retracted, hasRetracted bool
	ledgerName, _, errs[0] = r.ref("ledger")
	gsName, _, errs[1] = r.str("name")
	f.Name = cmp.Or(ledgerName, gsName)
	f.Branch, _, errs[2] = r.str("branch")
	f.Dependencies, _, errs[3] = readAs(r, "graphSourceDependencies", asStrings, "a list of strings")
	absent, _, errs[4] = r.boolean("dependenciesAbsent")
	if absent {
		f.Dependencies = nil
	}
	retracted, hasRetracted, errs[5] = r.boolean("retracted")
	if hasRetracted {
		f.Retracted = &retracted
	}
	f.CreatedAt, _, errs[6] = r.integer("createdAt")
	f.Branches, _, errs[7] = r.integer("branches")
	errs[8] = r.sourceBranch()
	f.Kind, f.SourceType = r.kind(ledgerName != "", gsName != "")
	return errors.Join(errs[:]...)
}

// marks reads f:incarnation, f:purged, f:purgedAt, f:collectUntil,
// f:writeIDs and f:branchOps.
func (r *reader) marks() error {
	var errs [5]error // the first one found is the file's error
	r.f.Incarnation, _, errs[0] = r.str("incarnation")
	r.f.Purged, _, errs[1] = r.boolean("purged")
	r.f.PurgedAt, _, errs[2] = r.integer("purgedAt")
	r.f.CollectUntil, _, errs[3] = r.integer("collectUntil")
	r.f.WriteIDs, _, errs[4] = readAs(r, "writeIDs", asStrings, "a list of strings")
	return cmp.Or(append(errs[:], r.branchOps())...)
}

// sourceBranch reads f:sourceBranch, else the source of f:branchPoint,
// which must be an object even when f:sourceBranch is there (the encoder
// copies it back, and a re-read must accept what was accepted once).
func (r *reader) sourceBranch() error {
	bp, err := r.nested("branchPoint")
	s, _, err2 := r.str("sourceBranch")
	if err := cmp.Or(err, err2); err != nil {
		return err
	}
	src, _ := asString(bp["source"])
	r.f.SourceBranch = cmp.Or(s, src) // an empty one is not written back: absent
	addr, _ := asRef(bp["commitCid"])
	if t, ok := asInt(bp["t"]); ok && t >= 1 && addr != "" {
		r.f.BranchPoint = &model.BranchPoint{Address: addr, T: t}
	}
	return nil
}

// kind reads the kind and source type from @type, falling back on the
// members present when @type says neither.
func (r *reader) kind(hasLedger, hasName bool) (model.Kind, string) {
	isGraph, isLedger := false, false
	var source string
	for _, t := range r.f.Classes {
		switch {
		case slices.Contains(graphClasses, t):
			isGraph = true
		case slices.Contains(ledgerClasses, t):
			isLedger = true
		case source == "":
			source = t
		}
	}
	switch {
	case isGraph || (!isLedger && source != ""):
		return model.GraphSource, source
	case isLedger:
		return model.Ledger, ""
	case r.f.Parts&Identity == 0:
		return "", ""
	case hasName && !hasLedger, r.vals["graphSourceConfig"] != nil, r.vals["graphSourceDependencies"] != nil:
		return model.GraphSource, ""
	}
	return model.Ledger, ""
}

func (r *reader) head() error {
	if r.f.Parts&HeadPart == 0 {
		return nil
	}
	cid, hasCid, err := r.str("commitCid")
	commit, hasCommit, err2 := r.ref("ledgerCommit")
	if err := cmp.Or(err, err2); err != nil {
		return err
	}
	if hasCid && hasCommit && cid != commit {
		return fmt.Errorf("commitCid %q and ledgerCommit %q disagree", cid, commit)
	}
	t, _, err := r.integer("t")
	if err != nil {
		return err
	}
	r.f.Head, err = refValue("head", cmp.Or(cid, commit), t) // equal when both are there
	return err
}

// refValue returns the value of a head or index at address and t; an
// absent address with t 0 is unborn.
func refValue(what, address string, t int64) (*model.Value, error) {
	if address == "" {
		if t != 0 {
			return nil, fmt.Errorf("%s at t %d has no address", what, t)
		}
		return &model.Value{}, nil
	}
	return new(model.RefValue(address, t)), nil
}

// indexForm is one way a file can state the index: an address and a t.
type indexForm struct {
	name    string
	address string
	t       int64
}

func (r *reader) index() error {
	if r.f.Parts&IndexPart == 0 {
		return nil
	}
	var forms []indexForm
	for _, read := range []func() (*indexForm, error){r.ledgerIndex, r.specGraphIndex, r.flureeGraphIndex} {
		form, err := read()
		if err != nil {
			return err
		}
		if form != nil {
			forms = append(forms, *form)
		}
	}
	if len(forms) == 0 {
		r.f.Index = &model.Value{} // index members present but null
		return nil
	}
	for _, f := range forms[1:] {
		if f.address != forms[0].address || f.t != forms[0].t {
			return fmt.Errorf("%s and %s disagree", forms[0].name, f.name)
		}
	}
	v, err := refValue("index", forms[0].address, forms[0].t)
	if err == nil {
		err = r.indexGraphs(v)
	}
	r.f.Index = v
	return err
}

// indexGraphs adds the named graphs of indexGraphs ({"@value": "JSON
// text"}) to index v, and checks them.
func (r *reader) indexGraphs(v *model.Value) error {
	g, ok, err := r.jsonText("indexGraphs")
	if err != nil || !ok {
		return err
	}
	if v.Payload == nil {
		return fmt.Errorf("indexGraphs beside an index without an address: an unborn index has no graphs")
	}
	v.Payload["graphs"] = map[string]any(g)
	if err := (*v).Validate(model.Index); err != nil {
		return fmt.Errorf("indexGraphs: %v", err)
	}
	return nil
}

func (r *reader) ledgerIndex() (*indexForm, error) {
	m, err := r.nested("ledgerIndex")
	if err != nil || m == nil {
		return nil, err
	}
	addr, err := oneAddress("ledgerIndex", m, "@id", "cid", "address")
	if err != nil {
		return nil, err
	}
	t, ok := asInt(m["t"])
	if m["t"] != nil && !ok {
		return nil, fmt.Errorf("ledgerIndex t is not an integer")
	}
	return &indexForm{name: "ledgerIndex", address: addr, t: t}, nil
}

// oneAddress returns the address stated under any of keys, or an error
// when two of them disagree or one is not a string.
func oneAddress(what string, m map[string]any, keys ...string) (string, error) {
	addr := ""
	for _, k := range keys {
		v, ok := m[k]
		if !ok || v == nil {
			continue
		}
		s, ok := asString(v)
		if !ok {
			return "", fmt.Errorf("%s %s is not a string", what, k)
		}
		if addr != "" && s != addr {
			return "", fmt.Errorf("%s states two addresses", what)
		}
		addr = s
	}
	return addr, nil
}

func (r *reader) specGraphIndex() (*indexForm, error) {
	addr, hasAddr, err := r.ref("indexAddress")
	t, hasT, err2 := r.integer("indexT")
	if err := cmp.Or(err, err2); err != nil || (!hasAddr && !hasT) {
		return nil, err
	}
	return &indexForm{name: "indexAddress", address: addr, t: t}, nil
}

func (r *reader) flureeGraphIndex() (*indexForm, error) {
	m, err := r.nested("graphSourceIndex")
	t, hasT, err2 := r.integer("graphSourceIndexT")
	if err := cmp.Or(err, err2); err != nil || (m == nil && !hasT) {
		return nil, err
	}
	addr, _ := asString(r.vals["graphSourceIndex"]) // the address alone
	if m != nil {
		if addr, err = oneAddress("graphSourceIndex", m, "graphSourceIndexCid", "@id", "cid"); err != nil {
			return nil, err
		}
	}
	return &indexForm{name: "graphSourceIndex", address: addr, t: t}, nil
}

func (r *reader) status() error {
	if r.f.Parts&StatusPart == 0 {
		return nil
	}
	state, hasState, err := r.str("status")
	if err != nil {
		return err
	}
	if !hasState {
		return fmt.Errorf("statusV or statusMeta without status")
	}
	v, hasV, err := r.integer("statusV")
	meta, _, err2 := r.object("statusMeta")
	if err := cmp.Or(err, err2); err != nil {
		return err
	}
	if !hasV {
		v = 1
	}
	p := model.Object{}
	maps.Copy(p, meta)
	p["state"] = state
	r.f.Status = &model.Value{V: v, Payload: p}
	return nil
}

func (r *reader) config() error {
	if r.f.Parts&ConfigPart == 0 {
		return nil
	}
	v, hasV, err := r.integer("configV")
	p, fields, err2 := r.configPayload()
	if err := cmp.Or(err, err2); err != nil {
		return err
	}
	if !hasV && fields {
		v = 1
	}
	if v == 0 {
		// Unborn: Fluree v4 graph-source files must carry a config, so an
		// unborn one is written as configV 0 beside a placeholder.
		p = nil
	}
	r.f.Config = &model.Value{V: v, Payload: p}
	return nil
}

// configPayload builds the config payload: configMeta's keys, then
// default_context and config_id, then a graph source's graphSourceConfig.
// fields reports whether any member other than configV was present.
func (r *reader) configPayload() (p model.Object, fields bool, err error) {
	meta, hasMeta, err := r.object("configMeta")
	if err != nil {
		return nil, false, err
	}
	p = model.Object{}
	maps.Copy(p, meta)
	fields = hasMeta
	for _, names := range [][]string{{"defaultContextCid", "defaultContext"}, {"configCid"}} {
		for _, name := range names {
			s, ok, err := r.ref(name)
			if err != nil {
				return nil, false, err
			}
			if ok {
				p[configKeys[names[0]]] = s
				fields = true
				break
			}
		}
	}
	gs, ok, err := r.jsonText("graphSourceConfig")
	if err != nil || !ok {
		return p, fields, err
	}
	maps.Copy(p, gs)
	return p, true, nil
}

// configKeys are the ledger config payload keys of dedicated members.
var configKeys = map[string]string{"defaultContextCid": "default_context", "configCid": "config_id"}

// jsonText reads an object member held as {"@value": "JSON text"},
// {"@value": {...}}, or the JSON text alone.
func (r *reader) jsonText(name string) (model.Object, bool, error) {
	v, ok := r.vals[name]
	if !ok || v == nil {
		return nil, false, nil
	}
	v = unwrap(v)
	if o, ok := asObject(v); ok {
		return o, true, nil
	}
	s, ok := v.(string)
	if !ok {
		return nil, false, fmt.Errorf("%s is a %s, not JSON text", name, jsonx.Kind(v))
	}
	o, err := model.ParseObject([]byte(s))
	if err != nil {
		return nil, false, fmt.Errorf("%s: %v", name, strings.TrimPrefix(err.Error(), model.ErrInvalidArgument.Error()+": "))
	}
	return o, o != nil, nil
}

// RecordID returns the ID the file states: its @id, or else its name and
// branch members. ok is false when it states neither.
func (f *File) RecordID() (model.ID, bool, error) {
	if f.ID != "" {
		id, err := model.ParseID(f.ID)
		if err != nil {
			return model.ID{}, false, fmt.Errorf("%w: @id: %v", ErrMalformed, err)
		}
		if f.ID != id.String() {
			return model.ID{}, false, fmt.Errorf("%w: @id %q is not in name:branch form", ErrMalformed, f.ID)
		}
		return id, true, nil
	}
	if f.Name != "" && f.Branch != "" {
		id := model.ID{Name: f.Name, Branch: f.Branch}
		if err := id.Validate(); err != nil {
			return model.ID{}, false, fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		return id, true, nil
	}
	return model.ID{}, false, nil
}

// WithoutIndex returns a copy of f whose index members are dropped, so a
// file re-encoded from it no longer carries an inline index.
func (f *File) WithoutIndex() *File {
	c := *f
	c.Index = nil
	c.Parts &^= IndexPart
	c.members = nil
	c.locals = map[string]int{}
	for _, m := range f.members {
		name, inVocab := local(f.ctx.expandKey(m.key))
		switch {
		case inVocab && knownParts[name] == IndexPart:
			continue
		case inVocab:
			c.locals[name] = len(c.members)
		case m.key == "@type":
			c.locals[m.key] = len(c.members)
		}
		c.members = append(c.members, m)
	}
	return &c
}
