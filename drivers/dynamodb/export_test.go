package dynamodb

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"nameservice.dev/nameservice/model"
)

// RecordItems returns the items Create would put for rec, for tests that
// seed many records fast with BatchWriteItem.
func RecordItems(rec *model.Record, nowMS int64) ([]map[string]types.AttributeValue, error) {
	return recordItems(rec, nowMS, "inc")
}

// CachedKinds returns how many records d's kind cache holds.
func CachedKinds(d *Driver) int {
	return d.kinds.Len()
}
