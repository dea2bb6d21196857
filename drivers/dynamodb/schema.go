package dynamodb

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"nameservice.dev/nameservice/internal/jsonx"
	"nameservice.dev/nameservice/model"
)

// The wire schema of dynamodb-nameservice-guide.md, a contract with every
// other reader and writer of the table (Fluree included): never rename one.
const (
	attrPK        = "pk"
	attrSK        = "sk"
	attrSchema    = "schema"
	attrUpdatedAt = "updated_at_ms"

	// meta item
	attrKind         = "kind"
	attrName         = "name"
	attrBranch       = "branch"
	attrRetracted    = "retracted"
	attrSourceType   = "source_type"
	attrDependencies = "dependencies"
	attrCreatedAt    = "created_at" // Unix seconds, as in the schema's examples
	attrBPSource     = "bp_source"  // Fluree's: the branch this one was created from
	attrBPCommitID   = "bp_commit_id"
	attrBPT          = "bp_t"     // with bp_commit_id: the commit a branch was created at
	attrBranches     = "branches" // Fluree's: how many branches were created from this one
	// attrSourceBranch is what earlier versions of this driver wrote for
	// bp_source: read, never written (MigrateBranchAttributes renames it).
	attrSourceBranch = "source_branch"

	// concern items
	attrCommitAddress  = "commit_address"
	attrCommitID       = "commit_id" // Fluree v4's: a content ID (see layout.encodeRef)
	attrCommitT        = "commit_t"
	attrIndexAddress   = "index_address"
	attrIndexID        = "index_id" // Fluree v4's: a content ID
	attrIndexT         = "index_t"
	attrIndexGraphs    = "index_graphs" // named graphs: JSON text of {name: {address, t, rev} | null}
	attrDefaultContext = "default_context_address"
	attrConfigMeta     = "config_meta"
	attrConfigJSON     = "config_json"
	attrConfigV        = "config_v"
	attrStatus         = "status"
	attrStatusMeta     = "status_meta"
	attrStatusV        = "status_v"
	// attrStatusState is the schema's optional denormalised status.state,
	// the key of the state-index (see indexedState).
	attrStatusState = "status_state"

	// commit-index rows (Fluree v4's; see commitSK)
	attrCommitCID = "commit_cid"
	attrTTL       = "ttl" // Unix seconds: written + commitRowTTL (a DynamoDB TTL, if enabled)

	// Write IDs: the IDs of the last three conditional writes to an item,
	// newest first (see update.resolve).
	attrWriteID  = "write_id"
	attrWriteID1 = "write_id_1"
	attrWriteID2 = "write_id_2"

	// attrIncarnation names an item's life (see incCache).
	attrIncarnation = "incarnation"

	// schemaVersion is the value of the schema attribute.
	schemaVersion = 2

	// IndexName is the global secondary index listing meta items by kind.
	IndexName = "gsi1-kind"
	// StateIndexName is the schema's optional index of status items by
	// status_state (`ns table create --indexes`, `ns table upgrade`).
	StateIndexName = "state-index"
	// SourceTypeIndexName is the schema's optional index of graph sources'
	// meta items by source_type.
	SourceTypeIndexName = "source-type-index"
)

// maxIndexKeyBytes is DynamoDB's limit on the partition key of an index.
const maxIndexKeyBytes = 2048

// indexedState returns the status_state attribute of a status of state,
// or nil (absent) when DynamoDB refuses it as an index key (empty or over
// maxIndexKeyBytes): such a state is listed by scanning.
func indexedState(state string) types.AttributeValue {
	if state == "" || len(state) > maxIndexKeyBytes {
		return nil
	}
	return stringAV(state)
}

// Source types. The model names a type of Fluree's vocabulary in compact
// db: form ("db:Bm25Index"), as the ns@v2 reader gives it; Fluree writes the
// meta item's source_type in its own form, "f:Bm25Index"
// (GraphSourceType::to_type_string), and reads that or the full IRI, any
// other text being a type it does not know.
const (
	modelTypePrefix  = "db:"
	flureeTypePrefix = "f:"
	vocabIRI         = "https://ns.flur.ee/db#"
)

// storedSourceType returns the source_type attribute of model type st.
func storedSourceType(st string) string {
	if rest, ok := strings.CutPrefix(st, modelTypePrefix); ok {
		return flureeTypePrefix + rest
	}
	return st
}

// modelSourceType returns the model type of source_type attribute s.
func modelSourceType(s string) string {
	for _, p := range []string{flureeTypePrefix, vocabIRI} {
		if rest, ok := strings.CutPrefix(s, p); ok {
			return modelTypePrefix + rest
		}
	}
	return s
}

// storedSourceTypes returns the source_type attributes a graph source of
// model type st may have: Fluree's form, which this driver writes, and the
// model's, which earlier versions of it wrote.
func storedSourceTypes(st string) []string {
	if s := storedSourceType(st); s != st {
		return []string{s, st}
	}
	return []string{st}
}

// The sort keys of the items of one record.
const (
	skMeta   = "meta"
	skHead   = "head"
	skIndex  = "index"
	skConfig = "config"
	skStatus = "status"
)

// Commit-index rows: Fluree's put_commit_index_item (fluree-db-storage-aws).
const (
	skCommitPrefix = "commit#"
	commitSKDigits = 20
	commitRowTTL   = 30 * 24 * 60 * 60 // seconds
)

// Payload keys of the model that have attributes of their own.
const (
	keyAddress        = "address"
	keyT              = "t"
	keyState          = "state"
	keyDefaultContext = "default_context"
)

// item is one DynamoDB item.
type item = map[string]types.AttributeValue

// sortKeys lists the sort keys of a record of kind k, meta first.
func sortKeys(k model.Kind) []string {
	if k == model.GraphSource {
		return []string{skMeta, skIndex, skConfig, skStatus}
	}
	return []string{skMeta, skHead, skIndex, skConfig, skStatus}
}

func keyOf(pk, sk string) item {
	return item{attrPK: stringAV(pk), attrSK: stringAV(sk)}
}

// malformed returns the error for an item this driver cannot interpret.
func malformed(pk, sk, format string, args ...any) error {
	return fmt.Errorf("dynamodb: item %s/%s: %w: %s", pk, sk, model.ErrInternal, fmt.Sprintf(format, args...))
}

// nullish reports whether an attribute is absent or NULL.
func nullish(it item, name string) bool { return isNull(it[name]) }

func getString(it item, name string) (string, bool) {
	s, ok := it[name].(*types.AttributeValueMemberS)
	if !ok {
		return "", false
	}
	return s.Value, true
}

// getInt reads an N attribute as an int64; ok is false when the attribute is
// absent or NULL, err non-nil when it is not an integer.
func getInt(it item, name string) (v int64, ok bool, err error) {
	if nullish(it, name) {
		return 0, false, nil
	}
	n, isN := it[name].(*types.AttributeValueMemberN)
	if !isN {
		return 0, false, fmt.Errorf("%s is a %T, not a number", name, it[name])
	}
	i, ok := jsonx.AsInt(json.Number(n.Value))
	if !ok {
		return 0, false, fmt.Errorf("%s %q is not a 64-bit integer", name, n.Value)
	}
	return i, true, nil
}

// toAV and fromAV convert JSON-normal payload values (see model.Object) to
// attribute values and back, by hand rather than through attributevalue, so
// that numbers never pass through float64: an N attribute becomes a
// json.Number holding DynamoDB's text of it.

// toAV converts a JSON-normal value to an attribute value. It returns an
// error wrapping model.ErrInvalidArgument for a value JSON cannot hold.
func toAV(v any) (types.AttributeValue, error) {
	switch x := v.(type) {
	case nil:
		return &types.AttributeValueMemberNULL{Value: true}, nil
	case bool:
		return &types.AttributeValueMemberBOOL{Value: x}, nil
	case string:
		return &types.AttributeValueMemberS{Value: x}, nil
	case json.Number:
		if !jsonx.IsNumber(string(x)) {
			return nil, fmt.Errorf("%w: %q is not a number", model.ErrInvalidArgument, string(x))
		}
		return &types.AttributeValueMemberN{Value: string(x)}, nil
	case int:
		return numberAV(int64(x)), nil
	case int64:
		return numberAV(x), nil
	case float64:
		return &types.AttributeValueMemberN{Value: strconv.FormatFloat(x, 'g', -1, 64)}, nil
	case []any:
		l, err := convert(x, toAV)
		if err != nil {
			return nil, err
		}
		return &types.AttributeValueMemberL{Value: l}, nil
	case map[string]any:
		return mapAV(x)
	case model.Object:
		return mapAV(x)
	}
	return nil, fmt.Errorf("%w: a payload value of Go type %T is not JSON", model.ErrInvalidArgument, v)
}

func numberAV(i int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(i, 10)}
}

func stringAV(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

func mapAV(x map[string]any) (types.AttributeValue, error) {
	m, err := convertMap(x, toAV)
	if err != nil {
		return nil, err
	}
	return &types.AttributeValueMemberM{Value: m}, nil
}

// fromAV converts an attribute value to a JSON-normal value. String and
// number sets become lists; binary values are not JSON and are an error.
func fromAV(av types.AttributeValue) (any, error) {
	switch x := av.(type) {
	case *types.AttributeValueMemberNULL:
		return nil, nil
	case *types.AttributeValueMemberBOOL:
		return x.Value, nil
	case *types.AttributeValueMemberS:
		return x.Value, nil
	case *types.AttributeValueMemberN:
		return json.Number(x.Value), nil
	case *types.AttributeValueMemberL:
		return convert(x.Value, fromAV)
	case *types.AttributeValueMemberM:
		return convertMap(x.Value, fromAV)
	case *types.AttributeValueMemberSS:
		return convert(x.Value, func(s string) (any, error) { return s, nil })
	case *types.AttributeValueMemberNS:
		return convert(x.Value, func(s string) (any, error) { return json.Number(s), nil })
	}
	return nil, fmt.Errorf("attribute of type %T is not JSON", av)
}

// convert applies f to every element of l; the first error ends it.
func convert[T, U any](l []T, f func(T) (U, error)) ([]U, error) {
	out := make([]U, len(l))
	for i, e := range l {
		var err error
		if out[i], err = f(e); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// convertMap applies f to every value of m; the first error, naming its
// key, ends it.
func convertMap[T, U any](m map[string]T, f func(T) (U, error)) (map[string]U, error) {
	out := make(map[string]U, len(m))
	for k, e := range m {
		v, err := f(e)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", k, err)
		}
		out[k] = v
	}
	return out, nil
}

// MaxItemSize is DynamoDB's limit on the size of one item, in bytes.
const MaxItemSize = 400 * 1024

// itemSize estimates an item's size the way DynamoDB counts it: attribute
// names plus values, strings in UTF-8 bytes, numbers about one byte per two
// digits, three bytes of overhead per list or map and one per element.
func itemSize(item map[string]types.AttributeValue) int {
	n := 0
	for k, v := range item {
		n += len(k) + avSize(v)
	}
	return n
}

func avSize(av types.AttributeValue) int {
	switch x := av.(type) {
	case *types.AttributeValueMemberS:
		return len(x.Value)
	case *types.AttributeValueMemberN:
		return (utf8.RuneCountInString(x.Value)+1)/2 + 1
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range x.Value {
			n += 1 + avSize(e)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range x.Value {
			n += 1 + len(k) + avSize(e)
		}
		return n
	case *types.AttributeValueMemberSS:
		n := 0
		for _, e := range x.Value {
			n += len(e)
		}
		return n
	}
	return 1
}

// checkSize returns an error wrapping model.ErrInvalidArgument when item
// would exceed MaxItemSize, before a request is sent.
func checkSize(pk, sk string, item map[string]types.AttributeValue) error {
	if n := itemSize(item); n > MaxItemSize {
		return fmt.Errorf("%w: item %s/%s would be about %d bytes, over DynamoDB's 400 KB (%d-byte) item limit",
			model.ErrInvalidArgument, pk, sk, n, MaxItemSize)
	}
	return nil
}
