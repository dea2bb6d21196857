package dynamodb

import (
	"encoding/json"
	"fmt"

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

	// attrIncarnation names an item's life (see incarnation.go).
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
