package dynamodb

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/model"
)

var _ driver.ChangeTimer = (*Driver)(nil)

// ChangedAt implements driver.ChangeTimer: the updated_at_ms every write
// sets on a concern's item (the schema's), read consistently. A concern
// whose item lacks it (a writer that does not set it) is left out.
func (d *Driver) ChangedAt(ctx context.Context, id model.ID) (map[model.Concern]time.Time, error) {
	if err := d.begin(ctx); err != nil {
		return nil, err
	}
	op := "changed at " + id.String()
	items, err := d.queryRecord(ctx, op, id.String())
	if err != nil {
		return nil, err
	}
	if _, ok := items[skMeta]; !ok {
		return nil, fmt.Errorf("dynamodb: %s: %w", op, model.ErrNotFound)
	}
	out := map[model.Concern]time.Time{}
	for sk, it := range items {
		n, ok := it[attrUpdatedAt].(*types.AttributeValueMemberN)
		if sk == skMeta || !ok {
			continue
		}
		if ms, err := strconv.ParseInt(n.Value, 10, 64); err == nil {
			out[concernOfSK(sk)] = time.UnixMilli(ms)
		}
	}
	return out, nil
}
