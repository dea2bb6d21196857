package dynamodb

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"nameservice.dev/nameservice/model"
)

// recordItems returns the items of a new record of incarnation inc, meta
// first, as Create puts them.
func recordItems(rec *model.Record, nowMS int64, inc string) ([]item, error) {
	pk := rec.ID.String()
	items := []item{metaItem(rec, nowMS)}
	for _, sk := range sortKeys(rec.Kind)[1:] {
		c := concernOfSK(sk)
		v := rec.Value(c)
		if v == nil {
			return nil, fmt.Errorf("%w: record %s: a %s without a %s", model.ErrInvalidArgument, pk, rec.Kind, c)
		}
		attrs, err := layoutFor(c, rec.Kind).encode(*v)
		if err != nil {
			return nil, fmt.Errorf("record %s: %w", pk, err)
		}
		items = append(items, withAttrs(baseItem(pk, sk, nowMS), attrs))
	}
	for _, it := range items {
		it[attrIncarnation] = stringAV(inc)
		if err := checkSize(pk, it[attrSK].(*types.AttributeValueMemberS).Value, it); err != nil {
			return nil, err
		}
	}
	return items, nil
}

// concernOfSK returns the concern of the item of sort key sk (a concern's
// name), Config for any other.
func concernOfSK(sk string) model.Concern {
	if c, err := model.ParseConcern(sk); err == nil {
		return c
	}
	return model.Config
}

// withAttrs adds to it the attributes of attrs that are not nil (absent).
func withAttrs(it item, attrs map[string]types.AttributeValue) item {
	for n, av := range attrs {
		if av != nil {
			it[n] = av
		}
	}
	return it
}

func baseItem(pk, sk string, nowMS int64) item {
	it := keyOf(pk, sk)
	it[attrSchema] = numberAV(schemaVersion)
	it[attrUpdatedAt] = numberAV(nowMS)
	return it
}

// metaItem encodes a record's identity. Optional attributes are written only
// when set; dependencies whenever not nil, so that nil and empty survive a
// round trip.
func metaItem(rec *model.Record, nowMS int64) item {
	it := baseItem(rec.ID.String(), skMeta, nowMS)
	it[attrKind] = stringAV(string(rec.Kind))
	it[attrName] = stringAV(rec.ID.Name)
	it[attrBranch] = stringAV(rec.ID.Branch)
	it[attrRetracted] = &types.AttributeValueMemberBOOL{Value: rec.Retracted}
	if rec.SourceType != "" {
		it[attrSourceType] = stringAV(storedSourceType(rec.SourceType))
	}
	if rec.Dependencies != nil {
		deps := make([]types.AttributeValue, len(rec.Dependencies))
		for i, d := range rec.Dependencies {
			deps[i] = stringAV(d)
		}
		it[attrDependencies] = &types.AttributeValueMemberL{Value: deps}
	}
	if rec.CreatedAt != 0 {
		it[attrCreatedAt] = numberAV(rec.CreatedAt)
	}
	if rec.SourceBranch != "" {
		it[attrBPSource] = stringAV(rec.SourceBranch)
	}
	if bp := rec.BranchPoint; bp != nil {
		it[attrBPCommitID] = stringAV(bp.Address)
		it[attrBPT] = numberAV(bp.T)
	}
	if rec.Branches != 0 {
		it[attrBranches] = numberAV(rec.Branches)
	}
	return it
}

// decodeRecord builds the record of pk from its items, keyed by sort key:
// nil without items, an error wrapping model.ErrInternal when an item is
// missing or cannot be read.
func decodeRecord(pk string, items map[string]item) (*model.Record, error) {
	if len(items) == 0 {
		return nil, nil
	}
	id, err := model.ParseID(pk)
	if err != nil {
		return nil, malformed(pk, skMeta, "pk is not an ID: %v", err)
	}
	rec := &model.Record{ID: id}
	if rec.Meta, err = decodeMeta(id, items); err != nil {
		return nil, err
	}
	for _, sk := range sortKeys(rec.Kind)[1:] {
		it, ok := items[sk]
		if !ok {
			return nil, malformed(pk, sk, "missing from a %s", rec.Kind)
		}
		v, err := layoutOfItem(sk, it).decode(pk, it)
		if err != nil {
			return nil, err
		}
		rec.SetValue(concernOfSK(sk), v)
	}
	// Each item decoded; together they must still make a valid record (an
	// empty commit_address at commit_t 0 is neither unborn nor a head).
	if err := rec.Validate(); err != nil {
		return nil, malformed(pk, skMeta, "%v", err)
	}
	return rec, nil
}

func decodeMeta(id model.ID, items map[string]item) (model.Meta, error) {
	pk := id.String()
	bad := func(format string, args ...any) (model.Meta, error) {
		return model.Meta{}, malformed(pk, skMeta, format, args...)
	}
	it, ok := items[skMeta]
	if !ok {
		return bad("missing (the record has %d other items)", len(items))
	}
	kind, _ := getString(it, attrKind)
	m := model.Meta{Kind: model.Kind(kind)}
	if !m.Kind.Valid() {
		return bad("kind %q is neither ledger nor graph_source", kind)
	}
	if n, ok := getString(it, attrName); ok && n != id.Name {
		return bad("name %q disagrees with the pk", n)
	}
	if b, ok := getString(it, attrBranch); ok && b != id.Branch {
		return bad("branch %q disagrees with the pk", b)
	}
	if r, ok := it[attrRetracted].(*types.AttributeValueMemberBOOL); ok {
		m.Retracted = r.Value
	} else if !nullish(it, attrRetracted) {
		return bad("retracted is not a boolean")
	}
	if st, ok := getString(it, attrSourceType); ok {
		m.SourceType = modelSourceType(st)
	}
	var err error
	if m.Dependencies, err = decodeDependencies(it); err != nil {
		return bad("%v", err)
	}
	if m.CreatedAt, _, err = getInt(it, attrCreatedAt); err != nil {
		return bad("%v", err)
	}
	if m.Branches, _, err = getInt(it, attrBranches); err != nil {
		return bad("%v", err)
	}
	// Fluree's drop_branch decrements without a floor: a count below 0
	// means none.
	m.Branches = max(m.Branches, 0)
	if err := decodeBranchPoint(it, &m); err != nil {
		return bad("%v", err)
	}
	return m, nil
}

// decodeBranchPoint reads the source branch from bp_source, else
// source_branch, and the branch point from bp_commit_id and bp_t.
func decodeBranchPoint(it item, m *model.Meta) error {
	var ok bool
	if m.SourceBranch, ok = getString(it, attrBPSource); !ok {
		m.SourceBranch, _ = getString(it, attrSourceBranch)
	}
	addr, hasAddr := getString(it, attrBPCommitID)
	t, hasT, err := getInt(it, attrBPT)
	if err != nil || !hasAddr || !hasT || m.SourceBranch == "" {
		return err
	}
	m.BranchPoint = &model.BranchPoint{Address: addr, T: t}
	return nil
}

func decodeDependencies(it item) ([]string, error) {
	if nullish(it, attrDependencies) {
		return nil, nil
	}
	v, err := fromAV(it[attrDependencies])
	if err != nil {
		return nil, fmt.Errorf("dependencies: %v", err)
	}
	l, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("dependencies is not a list")
	}
	deps := make([]string, len(l))
	for i, e := range l {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("dependencies[%d] is not a string", i)
		}
		deps[i] = s
	}
	return deps, nil
}
