package docstore

import (
	"fmt"
	"net/url"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/model"
)

// Field names of the documents. They are the storage format: never rename one.
const (
	fieldKey = "key" // single-field key: escaped ID + "|" + sort name
	fieldPK  = "pk"  // the record's ID, name:branch
	fieldSK  = "sk"  // meta, head, index, status or config
	fieldGen = "gen" // the creation token shared by a record's documents

	fieldKind = "kind"
)

// Sort names of the documents of one record.
const (
	skMeta = "meta"
)

// States of a meta document.
const (
	stateCreating = "creating" // claimed by a creator; the record is not visible
	stateLive     = "live"     // committed; the record exists
	statePurging  = "purging"  // claimed by a delete; the record is gone
)

// document is every kind of document this driver writes: a meta document
// uses the identity fields, a concern document V, Payload and (status only)
// Retracted.
type document struct {
	Key string `docstore:"key"`
	PK  string `docstore:"pk"`
	SK  string `docstore:"sk"`
	Gen string `docstore:"gen"`
	// W, W1 and W2 are the IDs of the last three writes of a concern
	// document, newest first (driverutil.WriteIDs), so that a writer whose
	// answer was lost can tell its own write from another's, and prove
	// that it never landed. In a meta document, W is the ID of the purge
	// that marked it, or the token of the last branch step.
	W  string `docstore:"w,omitempty"`
	W1 string `docstore:"w1,omitempty"`
	W2 string `docstore:"w2,omitempty"`
	// Life names the life of a concern document within its generation:
	// empty from its creation until a write that does not raise the
	// watermark where writes must (a head reset), which sets it to its own
	// write ID. The proofs of driverutil.WriteIDs hold within one life.
	Life string `docstore:"life,omitempty"`

	// meta
	State        string   `docstore:"state,omitempty"`
	CreatingMS   int64    `docstore:"creating_ms,omitempty"` // when the creator (or delete) claimed the ID
	Kind         string   `docstore:"kind,omitempty"`
	Name         string   `docstore:"name,omitempty"`
	Branch       string   `docstore:"branch,omitempty"`
	SourceType   string   `docstore:"source_type,omitempty"`
	Dependencies []string `docstore:"dependencies,omitempty"`
	// HasDeps marks an empty dependency list, which providers store and
	// read back as absent.
	HasDeps      bool   `docstore:"has_dependencies,omitempty"`
	CreatedAt    int64  `docstore:"created_at,omitempty"`
	SourceBranch string `docstore:"source_branch,omitempty"`
	Branches     int64  `docstore:"branches,omitempty"`
	// BPAddress and BPT are the branch point (Meta.BranchPoint).
	BPAddress string `docstore:"bp_address,omitempty"`
	BPT       int64  `docstore:"bp_t,omitempty"`
	// BranchOps is the JSON text of the branch steps under way (the
	// entries of internal/branching), absent when there are none.
	BranchOps string `docstore:"branch_ops,omitempty"`

	// concerns
	V         int64  `docstore:"v"`
	Payload   string `docstore:"payload,omitempty"` // JSON object; absent when unborn
	Retracted bool   `docstore:"retracted,omitempty"`

	Rev any `docstore:"DocstoreRevision"`
}

// docKey returns the single-field key of the document sk of id. url.PathEscape
// escapes "|" and "/", so keys are unambiguous and valid Firestore names.
func docKey(id model.ID, sk string) string {
	return url.PathEscape(id.String()) + "|" + sk
}

// keyDoc returns a document holding only the key fields of sk of id, for a
// Get or a Delete.
func keyDoc(id model.ID, sk string) *document {
	return &document{Key: docKey(id, sk), PK: id.String(), SK: sk}
}

// metaDoc returns the meta document of rec, in state creating.
func metaDoc(rec *model.Record, gen string, nowMS int64) *document {
	d := keyDoc(rec.ID, skMeta)
	d.Gen, d.State, d.CreatingMS = gen, stateCreating, nowMS
	d.Kind, d.Name, d.Branch = string(rec.Kind), rec.ID.Name, rec.ID.Branch
	d.SourceType, d.Dependencies, d.CreatedAt = rec.SourceType, rec.Dependencies, rec.CreatedAt
	d.SourceBranch, d.Branches = rec.SourceBranch, rec.Branches
	if bp := rec.BranchPoint; bp != nil {
		d.BPAddress, d.BPT = bp.Address, bp.T
	}
	d.HasDeps = rec.Dependencies != nil
	return d
}

// setValue stores v in d.
func (d *document) setValue(v model.Value) error {
	d.V, d.Payload = v.V, ""
	if v.Payload == nil {
		return nil
	}
	b, err := v.Payload.MarshalJSON()
	if err != nil {
		return fmt.Errorf("docstore: %w: %s %s payload: %v", model.ErrInvalidArgument, d.PK, d.SK, err)
	}
	d.Payload = string(b)
	return nil
}

// value returns the concern value d holds.
func (d *document) value() (model.Value, error) {
	if d.Payload == "" {
		return model.Value{V: d.V}, nil
	}
	p, err := model.ParseObject([]byte(d.Payload))
	if err != nil {
		return model.Value{}, fmt.Errorf("docstore: %w: document %s %s: payload: %v", model.ErrInternal, d.PK, d.SK, err)
	}
	return model.Value{V: d.V, Payload: p}, nil
}

// writes returns the write IDs concern document d records.
func (d *document) writes() driverutil.WriteIDs { return driverutil.WriteIDs{d.W, d.W1, d.W2} }

// next returns the version of concern document d that holds v, written by
// the write w, with d's revision so that the write is conditional. A write
// that does not raise the watermark where every write must (see rising)
// starts a new life of the document.
func (d *document) next(v model.Value, w driver.Write) (*document, error) {
	n := *d
	ids := d.writes()
	ids.Push(driverutil.WriteTag(w.ID, v.V))
	n.W, n.W1, n.W2 = ids[0], ids[1], ids[2]
	if v.V < d.V || v.V == d.V && rising(d.SK) {
		n.Life = w.ID
	}
	if err := n.setValue(v); err != nil {
		return nil, err
	}
	return &n, nil
}

// rising reports whether every write of the concern document sk raises its
// watermark: all but the index, which may be written again at the same t.
func rising(sk string) bool { return sk != model.Index.String() }

// meta returns the record identity held by meta document d.
func (d *document) meta() (model.ID, model.Meta, error) {
	id := model.ID{Name: d.Name, Branch: d.Branch}
	k := model.Kind(d.Kind)
	if id.String() != d.PK || !k.Valid() || id.Validate() != nil {
		return id, model.Meta{}, fmt.Errorf("docstore: %w: meta document %s: kind %q, name %q, branch %q do not fit", model.ErrInternal, d.PK, d.Kind, d.Name, d.Branch)
	}
	deps := d.Dependencies
	if deps == nil && d.HasDeps {
		deps = []string{}
	}
	m := model.Meta{Kind: k, SourceType: d.SourceType, Dependencies: deps,
		CreatedAt: d.CreatedAt, SourceBranch: d.SourceBranch, Branches: d.Branches}
	if d.BPAddress != "" {
		m.BranchPoint = &model.BranchPoint{Address: d.BPAddress, T: d.BPT}
	}
	return id, m, nil
}
