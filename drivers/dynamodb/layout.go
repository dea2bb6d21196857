package dynamodb

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"nameservice.dev/nameservice/internal/cid"
	"nameservice.dev/nameservice/model"
)

// A layout maps one concern's Value to the attributes of its item and back,
// and builds the condition "the item holds this value", which holds exactly
// when decode would return it.
type layout struct {
	shape  shape
	sk     string
	wm     string   // the watermark attribute
	fields []string // the attributes that hold the payload
	cidAt  string   // ref shapes: Fluree v4's content-ID attribute (see encodeRef)
}

type shape int

const (
	refShape          shape = iota // head, index: {address, t}; an index also {graphs} in fields[1]
	statusShape                    // status: {state, ...status_meta}
	ledgerConfigShape              // ledger config: {default_context, ...config_meta}
	sourceConfigShape              // graph-source config: the whole object in config_json
)

var (
	headLayout         = layout{refShape, skHead, attrCommitT, []string{attrCommitAddress}, attrCommitID}
	indexLayout        = layout{refShape, skIndex, attrIndexT, []string{attrIndexAddress, attrIndexGraphs}, attrIndexID}
	statusLayout       = layout{statusShape, skStatus, attrStatusV, []string{attrStatus, attrStatusMeta}, ""}
	ledgerConfigLayout = layout{ledgerConfigShape, skConfig, attrConfigV, []string{attrDefaultContext, attrConfigMeta}, ""}
	sourceConfigLayout = layout{sourceConfigShape, skConfig, attrConfigV, []string{attrConfigJSON}, ""}
)

// layoutFor returns the layout of concern c (a valid one) of a record of
// kind k.
func layoutFor(c model.Concern, k model.Kind) layout {
	if c == model.Config && k == model.GraphSource {
		return sourceConfigLayout
	}
	return [...]layout{headLayout, indexLayout, statusLayout, ledgerConfigLayout}[c]
}

// configLayoutOf tells a config item's layout from the item itself: a
// graph source's config item always has config_json (NULL while unborn), a
// ledger's never does.
func configLayoutOf(it item) layout {
	if _, ok := it[attrConfigJSON]; ok {
		return sourceConfigLayout
	}
	return ledgerConfigLayout
}

// layoutOfItem returns the layout of concern item it, of sort key sk.
func layoutOfItem(sk string, it item) layout {
	if c := concernOfSK(sk); c != model.Config {
		return layoutFor(c, model.Ledger)
	}
	return configLayoutOf(it)
}

// encode returns the attributes that hold v (a nil attribute value means
// "absent": omitted from a put, removed by an update). It returns an error
// wrapping model.ErrInvalidArgument when the item cannot hold v.
func (l layout) encode(v model.Value) (map[string]types.AttributeValue, error) {
	attrs := map[string]types.AttributeValue{l.wm: numberAV(v.V)}
	if err := l.encodePayload(v, attrs); err != nil {
		return nil, fmt.Errorf("%w: %s item cannot hold %s: %v", model.ErrInvalidArgument, l.sk, v, err)
	}
	return attrs, nil
}

func (l layout) encodePayload(v model.Value, attrs map[string]types.AttributeValue) error {
	null := &types.AttributeValueMemberNULL{Value: true}
	switch l.shape {
	case refShape:
		return l.encodeRef(v, attrs)
	case statusShape:
		attrs[attrStatus], attrs[attrStatusMeta], attrs[attrStatusState] = nil, nil, nil
		if v.Payload == nil {
			return nil
		}
		state, ok := v.Payload[keyState].(string)
		if !ok {
			return fmt.Errorf("a status payload needs a string state")
		}
		// status_state goes with every write of the status (decode ignores it).
		attrs[attrStatus], attrs[attrStatusState] = stringAV(state), indexedState(state)
		return setExtras(attrs, attrStatusMeta, v.Payload, keyState)
	case ledgerConfigShape:
		attrs[attrDefaultContext], attrs[attrConfigMeta] = null, nil
		if v.Payload == nil {
			return nil
		}
		attrs[attrDefaultContext] = nil
		if dc, ok := v.Payload[keyDefaultContext]; ok {
			var err error
			if attrs[attrDefaultContext], err = toAV(dc); err != nil {
				return err
			}
		}
		return setExtras(attrs, attrConfigMeta, v.Payload, keyDefaultContext)
	case sourceConfigShape:
		attrs[attrConfigJSON] = null
		if v.Payload == nil {
			return nil
		}
		b, err := v.Payload.MarshalJSON()
		if err != nil {
			return err
		}
		attrs[attrConfigJSON] = stringAV(string(b))
	}
	return nil
}

// encodeRef sets the attributes of a head or index. The pointer lives in one
// attribute (the other is removed): a content ID in commit_id or index_id,
// where Fluree v4 reads and compares it; any other address in the guide's
// commit_address or index_address. An unborn ref has a NULL address.
func (l layout) encodeRef(v model.Value, attrs map[string]types.AttributeValue) error {
	attrs[l.fields[0]], attrs[l.cidAt] = &types.AttributeValueMemberNULL{Value: true}, nil
	if len(l.fields) > 1 {
		attrs[l.fields[1]] = nil
	}
	if v.Payload == nil {
		return nil
	}
	ref, ok := v.Ref()
	if !ok || ref.T != v.V || (ref.Graphs != nil && len(l.fields) < 2) {
		return fmt.Errorf("a ref payload is exactly {address: string, t: %s} (an index may add graphs)", l.wm)
	}
	set, removed := l.fields[0], l.cidAt
	if cid.Parse(ref.Address) == nil {
		set, removed = l.cidAt, l.fields[0]
	}
	attrs[set], attrs[removed] = stringAV(ref.Address), nil
	if ref.Graphs != nil {
		b, err := json.Marshal(v.Payload["graphs"]) // sorted keys: equal graphs, equal text
		if err != nil {
			return err
		}
		attrs[l.fields[1]] = stringAV(string(b))
	}
	return nil
}

// setExtras stores the payload's keys other than own as a map in attribute
// name (absent when none).
func setExtras(attrs map[string]types.AttributeValue, name string, p model.Object, own string) error {
	extras := extrasOf(p, own)
	if len(extras) == 0 {
		attrs[name] = nil
		return nil
	}
	var err error
	attrs[name], err = mapAV(extras)
	return err
}

func extrasOf(p model.Object, own string) map[string]any {
	extras := maps.Clone(p)
	delete(extras, own)
	return extras
}

// decode reads the value an item holds. pk names the item in errors, which
// wrap model.ErrInternal.
func (l layout) decode(pk string, it item) (model.Value, error) {
	v, ok, err := getInt(it, l.wm)
	if err != nil {
		return model.Value{}, malformed(pk, l.sk, "%v", err)
	}
	if !ok {
		return model.Value{}, malformed(pk, l.sk, "no %s", l.wm)
	}
	var p model.Object
	switch l.shape {
	case refShape:
		p, err = decodeRef(l, v, it)
	case statusShape:
		p, err = decodeStatus(v, it)
	case ledgerConfigShape:
		p, err = decodeLedgerConfig(v, it)
	default:
		p, err = decodeSourceConfig(v, it)
	}
	if err != nil {
		return model.Value{}, malformed(pk, l.sk, "%v", err)
	}
	return model.Value{V: v, Payload: p}, nil
}

// decodeRef reads a head or index. The content-ID attribute wins over the
// address attribute: both there means Fluree v4 moved the pointer after a
// write of the address, and Fluree reads the same attribute
// (docs/dynamodb.md).
func decodeRef(l layout, v int64, it item) (model.Object, error) {
	name := l.cidAt
	if nullish(it, name) {
		name = l.fields[0]
	}
	addr, born, err := bornString(it, name, l.wm, v, v == 0)
	if !born {
		return nil, err
	}
	p := model.Object{keyAddress: addr, keyT: json.Number(strconv.FormatInt(v, 10))}
	if len(l.fields) > 1 && !nullish(it, l.fields[1]) {
		s, ok := getString(it, l.fields[1])
		if !ok {
			return nil, fmt.Errorf("%s is not a string", l.fields[1])
		}
		g, err := model.ParseObject([]byte(s))
		if err != nil || g == nil {
			return nil, fmt.Errorf("%s is not a JSON object", l.fields[1])
		}
		if graphsOf(g, addr, v) {
			p["graphs"] = map[string]any(g)
		}
	}
	return p, nil
}

// graphsOf reports whether named graphs g belong to the index at address
// and t. Graphs whose default graph is another index are stale (Fluree's
// publish_index moved the index on without them) and read as none;
// anything else is kept, for the record's validation to judge.
func graphsOf(g model.Object, address string, t int64) bool {
	m, ok := g[model.DefaultGraph].(map[string]any)
	if !ok {
		return true
	}
	def := model.Object(m)
	a, okA := def[keyAddress].(string)
	dt, okT := def.Int(keyT)
	return !okA || !okT || (a == address && dt == t)
}

func decodeStatus(v int64, it item) (model.Object, error) {
	extras, err := decodeExtras(it, attrStatusMeta)
	if err != nil {
		return nil, err
	}
	state, born, err := bornString(it, attrStatus, attrStatusV, v, v == 0 && len(extras) == 0)
	if !born {
		return nil, err
	}
	extras[keyState] = state
	return extras, nil
}

func decodeLedgerConfig(v int64, it item) (model.Object, error) {
	extras, err := decodeExtras(it, attrConfigMeta)
	if err != nil {
		return nil, err
	}
	if v == 0 && nullish(it, attrDefaultContext) && len(extras) == 0 {
		return nil, nil
	}
	if av, ok := it[attrDefaultContext]; ok {
		dc, err := fromAV(av)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", attrDefaultContext, err)
		}
		extras[keyDefaultContext] = dc
	}
	return extras, nil
}

func decodeSourceConfig(v int64, it item) (model.Object, error) {
	s, born, err := bornString(it, attrConfigJSON, attrConfigV, v, v == 0)
	if !born {
		return nil, err
	}
	p, err := model.ParseObject([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("config_json: %v", err)
	}
	if p == nil && v != 0 {
		return nil, fmt.Errorf("config_v %d with a null config_json", v)
	}
	return p, nil
}

// bornString reads string attribute name of an item whose watermark wm is
// v: absent or NULL (born false) only while unborn.
func bornString(it item, name, wm string, v int64, unborn bool) (s string, born bool, err error) {
	if nullish(it, name) {
		if unborn {
			return "", false, nil
		}
		return "", false, fmt.Errorf("%s %d without %s", wm, v, name)
	}
	if s, born = getString(it, name); !born {
		return "", false, fmt.Errorf("%s is not a string", name)
	}
	return s, true, nil
}

// decodeExtras reads a map attribute of extra payload keys; absent, NULL and
// empty all mean none.
func decodeExtras(it item, name string) (model.Object, error) {
	if nullish(it, name) {
		return model.Object{}, nil
	}
	m, ok := it[name].(*types.AttributeValueMemberM)
	if !ok {
		return nil, fmt.Errorf("%s is not a map", name)
	}
	x, err := convertMap(m.Value, fromAV)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return x, nil
}

// Condition builders.

func nameB(n string) expression.NameBuilder { return expression.Name(n) }

func valueB(av types.AttributeValue) expression.ValueBuilder { return expression.Value(av) }

// isNullish is the condition "attribute n is absent or NULL".
func isNullish(n string) expression.ConditionBuilder {
	return expression.Or(nameB(n).AttributeNotExists(), nameB(n).AttributeType(expression.Null))
}

// itemExists is the condition that the item exists; every update carries it
// so that UpdateItem never creates an item.
func itemExists() expression.ConditionBuilder { return nameB(attrPK).AttributeExists() }

// never is a condition no item meets, for an expected value no item can
// hold: the one request still returns the current item.
func never() expression.ConditionBuilder {
	return expression.And(nameB(attrPK).AttributeExists(), nameB(attrPK).AttributeNotExists())
}

// witness is the condition that the item has this layout (config only: a
// guessed kind must not write a ledger's config into a graph source's).
func (l layout) witness() (expression.ConditionBuilder, bool) {
	switch l.shape {
	case ledgerConfigShape:
		return nameB(attrConfigJSON).AttributeNotExists(), true
	case sourceConfigShape:
		return nameB(attrConfigJSON).AttributeExists(), true
	}
	return expression.ConditionBuilder{}, false
}

// equals returns the condition "the item holds e"; ok is false when no item
// of this layout can hold e. It holds exactly when decode returns e, except
// for stale named graphs (see graphsOf), which Update's retry on the item's
// exact attributes (update.exact) covers.
func (l layout) equals(e model.Value) (cond expression.ConditionBuilder, ok bool) {
	if (e.V == 0) != (e.Payload == nil) {
		return cond, false // decode yields payloads exactly for born values, which start above 0
	}
	attrs, err := l.encode(e)
	if err != nil {
		return cond, false
	}
	parts := []expression.ConditionBuilder{nameB(l.wm).Equal(valueB(attrs[l.wm]))}
	switch l.shape {
	case refShape:
		addr := attrs[l.cidAt] // where encodeRef put the address
		if addr == nil {
			addr = attrs[l.fields[0]]
		}
		parts = append(parts, l.refEquals(addr))
		if len(l.fields) > 1 {
			parts = append(parts, equalOrNullish(l.fields[1], attrs[l.fields[1]]))
		}
	case statusShape:
		parts = append(parts, equalOrNullish(attrStatus, attrs[attrStatus]), extrasEqual(attrStatusMeta, attrs[attrStatusMeta]))
	case ledgerConfigShape:
		parts = append(parts, defaultContextEquals(e, attrs[attrDefaultContext]), extrasEqual(attrConfigMeta, attrs[attrConfigMeta]))
	case sourceConfigShape:
		parts = append(parts, equalOrNullish(attrConfigJSON, attrs[attrConfigJSON]))
	}
	return expression.And(parts[0], parts[1], parts[2:]...), true
}

func isNull(av types.AttributeValue) bool {
	_, ok := av.(*types.AttributeValueMemberNULL)
	return av == nil || ok
}

// refEquals mirrors decodeRef: the content-ID attribute, or the address
// attribute when the content-ID attribute is absent or NULL.
func (l layout) refEquals(addr types.AttributeValue) expression.ConditionBuilder {
	id, address := l.cidAt, l.fields[0]
	if isNull(addr) {
		return expression.And(isNullish(id), isNullish(address))
	}
	return expression.Or(nameB(id).Equal(valueB(addr)),
		expression.And(isNullish(id), nameB(address).Equal(valueB(addr))))
}

func equalOrNullish(name string, av types.AttributeValue) expression.ConditionBuilder {
	if isNull(av) {
		return isNullish(name)
	}
	return nameB(name).Equal(valueB(av))
}

// extrasEqual is the condition "map attribute name holds av"; for av nil,
// "it is absent, NULL or {}".
func extrasEqual(name string, av types.AttributeValue) expression.ConditionBuilder {
	if av == nil {
		n, empty := nameB(name), &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}}
		return expression.Or(n.AttributeNotExists(), n.AttributeType(expression.Null), n.Equal(valueB(empty)))
	}
	return nameB(name).Equal(valueB(av))
}

// defaultContextEquals mirrors decodeLedgerConfig.
func defaultContextEquals(e model.Value, av types.AttributeValue) expression.ConditionBuilder {
	switch {
	case e.Payload == nil:
		return isNullish(attrDefaultContext)
	case av == nil:
		return nameB(attrDefaultContext).AttributeNotExists()
	case isNull(av):
		return nameB(attrDefaultContext).AttributeType(expression.Null)
	}
	return nameB(attrDefaultContext).Equal(valueB(av))
}

// exactly returns the condition "the item's watermark and payload attributes
// are exactly those of it", for a compare-and-set whose expected value
// equals the current one by value but not by representation.
func (l layout) exactly(it item) expression.ConditionBuilder {
	names := append([]string{l.wm}, l.fields...)
	if l.cidAt != "" {
		names = append(names, l.cidAt)
	}
	parts := make([]expression.ConditionBuilder, 0, len(names))
	for _, n := range names {
		av, ok := it[n]
		switch {
		case !ok:
			parts = append(parts, nameB(n).AttributeNotExists())
		case isNull(av):
			parts = append(parts, nameB(n).AttributeType(expression.Null))
		default:
			parts = append(parts, nameB(n).Equal(valueB(av)))
		}
	}
	parts = append(parts, itemExists())
	return expression.And(parts[0], parts[1], parts[2:]...)
}

// setAttrs sets attrs in upd (nil: removes), in name order so that
// expressions are deterministic.
func setAttrs(upd expression.UpdateBuilder, attrs map[string]types.AttributeValue) expression.UpdateBuilder {
	for _, n := range slices.Sorted(maps.Keys(attrs)) {
		if attrs[n] == nil {
			upd = upd.Remove(nameB(n))
		} else {
			upd = upd.Set(nameB(n), valueB(attrs[n]))
		}
	}
	return upd
}

// describe names a layout's item for messages.
func (l layout) describe(pk string) string { return pk + "/" + l.sk }
