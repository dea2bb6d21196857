package jsonld

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"nameservice.dev/nameservice/internal/jsonx"
	"nameservice.dev/nameservice/model"
)

// Dialect is a form Encode writes.
type Dialect string

// The writer dialects.
const (
	// Spec is the form of nameservice-schema-v2.md ("db:" prefix,
	// db:ledgerCommit {@id}, db:ledgerIndex {@id, db:t}, db:indexAddress,
	// db:indexT); members the schema leaves unnamed take the names of
	// Fluree's current files (statusV, statusMeta, configV, ...).
	Spec Dialect = "spec"
	// FlureeV4 is the form Fluree v4 writes and reads ("f:" prefix,
	// f:commitCid, f:ledgerIndex {f:cid, f:t}, f:graphSourceIndex).
	FlureeV4 Dialect = "fluree-v4"
)

// ParseDialect returns the dialect named s ("spec" or "fluree-v4"; "" is
// Spec). It returns an error wrapping model.ErrInvalidArgument otherwise.
func ParseDialect(s string) (Dialect, error) {
	switch Dialect(s) {
	case "", Spec:
		return Spec, nil
	case FlureeV4:
		return FlureeV4, nil
	}
	return "", fmt.Errorf("%w: unknown ns@v2 dialect %q (want spec or fluree-v4)", model.ErrInvalidArgument, s)
}

func (d Dialect) prefix() string {
	if d == FlureeV4 {
		return "f"
	}
	return ModelPrefix
}

// EncodeOptions says what Encode writes.
type EncodeOptions struct {
	Dialect Dialect
	// Parts are the parts of the record this file carries.
	Parts Part
	// Prev is the file being replaced, or nil. Its members that Encode does
	// not write itself (unknown members, and known members of parts not in
	// Parts) are written back unchanged, and a member whose value did not
	// change keeps its original bytes.
	Prev *File
	// Incarnation, when set, is written as f:incarnation (replacing
	// Prev's); when "", Prev's is kept.
	Incarnation string
	// Tombstone writes f:purged true; without it Prev's f:purged is
	// dropped.
	Tombstone bool
	// PurgedAt and CollectUntil, when not 0, are written as f:purgedAt and
	// f:collectUntil (Unix milliseconds) on a tombstone.
	PurgedAt, CollectUntil int64
	// BranchOps, when not nil, replaces Prev's f:branchOps (an empty list
	// removes it); when nil, Prev's is kept.
	BranchOps *[]BranchOp
	// WriteID, when set, is written as the newest entry of f:writeIDs,
	// before the newest MaxWriteIDs-1 of Prev's; when "", Prev's are kept.
	WriteID string
}

// MaxWriteIDs is how many entries f:writeIDs keeps.
const MaxWriteIDs = 3

// Encode writes the parts opts.Parts of rec as one ns@v2 file of
// opts.Dialect: members in a fixed order, indented by two spaces. It
// returns an error wrapping model.ErrInvalidArgument when rec cannot be
// written (an unknown dialect, a payload that is not JSON).
func Encode(rec *model.Record, opts EncodeOptions) ([]byte, error) {
	d, err := ParseDialect(string(opts.Dialect))
	if err != nil {
		return nil, err
	}
	opts.Dialect = d
	w := &writer{EncodeOptions: opts, rec: rec, prefix: d.prefix(), used: map[int]bool{}}
	if w.Prev == nil {
		w.Prev = &File{ctx: &jsonContext{terms: map[string]string{}}, locals: map[string]int{}}
	}
	if err := w.build(); err != nil {
		return nil, fmt.Errorf("%w: encode %s: %v", model.ErrInvalidArgument, rec.ID, err)
	}
	return w.bytes()
}

type writer struct {
	EncodeOptions // Dialect parsed, Prev never nil
	rec           *model.Record
	prefix        string
	used          map[int]bool // Prev members written
	out           []member
	preserved     bool // some output depends on Prev's @context
}

func (w *writer) graph() bool { return w.rec.Kind == model.GraphSource }

// owns reports whether this file writes the members of part, replacing any
// prev had (a graph source has no head).
func (w *writer) owns(part Part) bool {
	return part != 0 && w.Parts&part != 0 && !(part == HeadPart && w.graph())
}

func (w *writer) build() error {
	// Every file carries its @id, except the Fluree v4 ledger index file,
	// which has none in Fluree's own files.
	if !(w.Dialect == FlureeV4 && !w.graph() && w.Parts == IndexPart) {
		w.out = append(w.out, member{key: "@id", raw: mustJSON(w.rec.ID.String())})
	}
	if err := w.types(); err != nil {
		return err
	}
	for _, name := range memberOrder[w.Dialect][w.graph()] {
		if err := w.slot(name); err != nil {
			return err
		}
	}
	w.marks()
	if err := w.rest(); err != nil {
		return err
	}
	// Kept members whose keys only differed through prev's @context may
	// now get one key.
	seen := map[string]bool{"@context": true}
	for _, m := range w.out {
		if seen[m.key] {
			return fmt.Errorf("two members would be written as %q", m.key)
		}
		seen[m.key] = true
	}
	return nil
}

// marks writes f:incarnation, f:writeIDs, f:purged and its times as the
// options say; prev's purge marks are dropped when this is not a
// tombstone, and its times whenever the options set none (a new seal is
// timed anew).
func (w *writer) marks() {
	// put writes member name when set, else drops prev's.
	put := func(name string, v any, set bool) {
		if set {
			w.emit(name, v)
		} else if i, ok := w.Prev.locals[name]; ok {
			w.used[i] = true
		}
	}
	if w.Incarnation != "" {
		w.emit("incarnation", w.Incarnation)
	}
	if w.WriteID != "" {
		ids := append([]string{w.WriteID}, w.Prev.WriteIDs...)
		w.emit("writeIDs", ids[:min(len(ids), MaxWriteIDs)])
	}
	put("purged", true, w.Tombstone)
	put("purgedAt", w.PurgedAt, w.Tombstone && w.PurgedAt != 0)
	put("collectUntil", w.CollectUntil, w.Tombstone && w.CollectUntil != 0)
	if w.BranchOps != nil { // else prev's, if any, is kept by rest
		put("branchOps", *w.BranchOps, len(*w.BranchOps) > 0)
	}
}

var (
	v4Ledger = []string{"ledger", "branch", "commitCid", "ledgerCommit", "t", "ledgerIndex", "indexGraphs", "status",
		"defaultContextCid", "defaultContext", "statusV", "statusMeta", "configV", "configMeta", "configCid",
		"sourceBranch", "branchPoint", "branches", "createdAt", "retracted"}
	v4Graph = []string{"name", "branch", "graphSourceConfig", "graphSourceDependencies", "dependenciesAbsent", "status", "statusV",
		"statusMeta", "configV", "graphSourceIndex", "graphSourceIndexT", "indexAddress", "indexT", "ledgerIndex",
		"sourceBranch", "branchPoint", "branches", "createdAt", "retracted"}
	specLedger = []string{"ledger", "branch", "ledgerCommit", "commitCid", "t", "ledgerIndex", "indexGraphs", "status",
		"statusV", "statusMeta", "configV", "defaultContextCid", "defaultContext", "configCid", "configMeta",
		"createdAt", "retracted", "sourceBranch", "branchPoint", "branches"}
	specGraph = []string{"name", "branch", "graphSourceDependencies", "indexAddress", "indexT",
		"graphSourceIndex", "graphSourceIndexT", "ledgerIndex", "status", "statusV", "statusMeta", "configV",
		"graphSourceConfig", "createdAt", "retracted", "sourceBranch", "branchPoint", "branches"}
)

// memberOrder is the order of the members of a file by dialect, for a
// ledger (false) and a graph source (true).
var memberOrder = map[Dialect]map[bool][]string{
	FlureeV4: {false: v4Ledger, true: v4Graph},
	Spec:     {false: specLedger, true: specGraph},
}

// slot writes member name: generated when this file owns its part, else
// copied from prev. A branch point that says what the record says is kept
// as it was, since it may hold more than the model does.
func (w *writer) slot(name string) error {
	i, had := w.Prev.locals[name]
	a, b := w.rec.BranchPoint, w.Prev.BranchPoint
	if had && name == "branchPoint" && w.rec.SourceBranch == w.Prev.SourceBranch &&
		(a == nil) == (b == nil) && (a == nil || *a == *b) {
		return w.keep(i)
	}
	if part := knownParts[name]; w.owns(part) {
		v, ok, err := generators[part](w, name)
		if err != nil || !ok {
			return err
		}
		w.emit(name, v)
		return nil
	}
	if had {
		return w.keep(i)
	}
	return nil
}

// rest copies prev's remaining members that this file does not own, in
// their original order.
func (w *writer) rest() error {
	for i, m := range w.Prev.members {
		if w.used[i] || m.key == "@context" || m.key == "@id" || m.key == "@type" {
			continue // @context and @id are written anew, @type by types
		}
		name, inVocab := local(w.Prev.ctx.expandKey(m.key))
		if inVocab && w.owns(knownParts[name]) {
			continue // replaced, or cleared, by this file
		}
		if err := w.keep(i); err != nil {
			return err
		}
	}
	return nil
}

// keep copies prev's member i, re-keyed: "prefix:name" in the vocabulary,
// else the key as it was, or its IRI when its prefix is this file's (which
// now means the vocabulary).
func (w *writer) keep(i int) error {
	m := w.Prev.members[i]
	key, iri := m.key, w.Prev.ctx.expandKey(m.key)
	if name, ok := local(iri); ok {
		key = w.key(name)
	} else if p, _, ok := strings.Cut(key, ":"); ok && p == w.prefix {
		if iri == key {
			return fmt.Errorf("member %q cannot be kept: its prefix %q is unbound there and means the vocabulary here", key, p)
		}
		key = iri
	}
	w.used[i] = true
	w.preserved = true
	w.out = append(w.out, member{key: key, raw: m.raw})
	return nil
}

// emit writes a generated member, keeping prev's bytes when its value is
// the same.
func (w *writer) emit(name string, v any) {
	raw := mustJSON(v)
	if i, ok := w.Prev.locals[name]; ok {
		if old := w.Prev.members[i].raw; w.Prev.ctx.terms[w.prefix] == Vocab && sameValue(name, old, raw) {
			raw = old
		}
		w.used[i] = true
	}
	w.out = append(w.out, member{key: w.key(name), raw: raw})
}

// sameValue compares two encodings of member name: JSON values compared by
// value, a graph-source config by the JSON it holds, a graph-source index
// by its address (so an index written without "@type": "f:ContentId" is
// kept as it was until it changes).
func sameValue(name string, a, b json.RawMessage) bool {
	va, errA := value(a)
	vb, errB := value(b)
	if errA != nil || errB != nil {
		return false
	}
	switch name {
	case "graphSourceConfig":
		va, vb = configJSON(va), configJSON(vb)
	case "graphSourceIndex":
		va, vb = withoutType(va), withoutType(vb)
	}
	return jsonx.Equal(va, vb)
}

func configJSON(v any) any {
	if s, ok := unwrap(v).(string); ok {
		if o, err := model.ParseObject([]byte(s)); err == nil {
			return map[string]any(o)
		}
	}
	return v
}

func withoutType(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	c := maps.Clone(m)
	delete(c, "@type")
	return c
}

func mustJSON(v any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only values built by this package reach here; they always encode.
		return json.RawMessage("null")
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// bytes assembles the file: @context first, then the members, indented.
func (w *writer) bytes() ([]byte, error) {
	var out bytes.Buffer
	if err := json.Indent(&out, objectJSON(append([]member{{key: "@context", raw: w.context()}}, w.out...)), "", "  "); err != nil {
		return nil, fmt.Errorf("%w: encode %s: %v", model.ErrInternal, w.rec.ID, err)
	}
	if w.Dialect == Spec {
		out.WriteByte('\n')
	}
	return out.Bytes(), nil
}

// context is {prefix: Vocab}, plus prev's own @context when a member copied
// from prev may depend on it.
func (w *writer) context() json.RawMessage {
	own := member{key: w.prefix, raw: mustJSON(Vocab)}
	raw := w.Prev.ctxRaw
	if !w.preserved || len(raw) == 0 {
		return objectJSON([]member{own})
	}
	if raw[0] != '{' {
		return mustJSON([]json.RawMessage{raw, objectJSON([]member{own})})
	}
	members, _ := parseObject(raw) // Decode read it once already
	mine := func(m member) bool { return m.key == w.prefix }
	return objectJSON(append([]member{own}, slices.DeleteFunc(members, mine)...))
}

func objectJSON(members []member) json.RawMessage {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(mustJSON(m.key))
		buf.WriteByte(':')
		buf.Write(m.raw)
	}
	buf.WriteByte('}')
	return buf.Bytes()
}

// types writes @type when the file carries the identity: the kind's class,
// the source type, then any further types prev had.
func (w *writer) types() error {
	if !w.owns(Identity) {
		if i, ok := w.Prev.locals["@type"]; ok {
			return w.keep(i)
		}
		return nil
	}
	var list []string
	switch {
	case w.graph():
		list = []string{w.iri(w.graphClass())}
		if w.rec.SourceType != "" {
			st := w.iri(w.rec.SourceType)
			if p, _, _ := strings.Cut(st, ":"); p == w.prefix && !strings.HasPrefix(w.rec.SourceType, ModelPrefix+":") && st == w.rec.SourceType {
				return fmt.Errorf("source type %q cannot be written: its prefix means the vocabulary in this dialect", st)
			}
			list = append(list, st)
		}
	case w.Dialect == Spec:
		list = []string{w.iri("db:Database"), w.iri("db:LedgerSource")}
	default:
		list = []string{w.iri("db:LedgerSource")}
	}
	raw := mustJSON(append(list, w.extraTypes(list)...))
	if i, ok := w.Prev.locals["@type"]; ok && w.Prev.ctx.terms[w.prefix] == Vocab && sameValue("@type", w.Prev.members[i].raw, raw) {
		raw = w.Prev.members[i].raw
	}
	w.out = append(w.out, member{key: "@type", raw: raw})
	return nil
}

// extraTypes returns prev's @type entries that are neither a kind class nor
// the source type, as written (they may rely on prev's @context).
func (w *writer) extraTypes(have []string) []string {
	i, ok := w.Prev.locals["@type"]
	if !ok {
		return nil
	}
	list, _ := asStrings(mustValue(w.Prev.members[i].raw))
	extra := slices.DeleteFunc(list, func(t string) bool {
		c := w.Prev.ctx.compactIRI(t)
		return slices.Contains(graphClasses, c) || slices.Contains(ledgerClasses, c) || c == w.rec.SourceType || slices.Contains(have, t)
	})
	w.preserved = w.preserved || len(extra) > 0
	return extra
}

// graphClass is the class prev gave the graph source, else IndexSource, or
// MappedSource for a mapping (R2rmlMapping, IcebergMapping).
func (w *writer) graphClass() string {
	isGraph := func(c string) bool { return slices.Contains(graphClasses, c) }
	if i := slices.IndexFunc(w.Prev.Classes, isGraph); i >= 0 {
		return w.Prev.Classes[i]
	}
	if strings.HasSuffix(w.rec.SourceType, "Mapping") {
		return "db:MappedSource"
	}
	return "db:IndexSource"
}

// iri writes a model IRI ("db:Name", or a full vocabulary IRI) with this
// file's prefix; other IRIs stay as they are.
func (w *writer) iri(s string) string {
	if name, ok := strings.CutPrefix(s, ModelPrefix+":"); ok {
		return w.key(name)
	}
	if name, ok := local(s); ok {
		return w.key(name)
	}
	return s
}

func (w *writer) key(name string) string { return w.prefix + ":" + name }
