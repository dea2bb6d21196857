package dynamodb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/backoff"
	"nameservice.dev/nameservice/internal/telemetry"
)

// maxTxAttempts bounds the driver's own retries of a transaction cancelled
// because another transaction or write held one of its items.
const maxTxAttempts = 6

// Create implements driver.Driver: one TransactWriteItems putting every item
// of the record (5 for a ledger, 4 for a graph source), each on condition
// attribute_not_exists(pk). A cancellation because of those conditions means
// the ID is taken (even by a single stray item) and returns an error wrapping
// driver.ErrAlreadyExists. The transaction carries a client request token, so
// the SDK's retries (and the driver's resend after a lost answer) are
// idempotent: a retry of a create that landed succeeds.
func (d *Driver) Create(ctx context.Context, rec *driver.Record) error {
	if err := d.begin(ctx); err != nil {
		return err
	}
	op := "create " + rec.ID.String()
	items, err := recordItems(rec, d.nowMS())
	if err != nil {
		return fmt.Errorf("dynamodb: %s: %w", op, err)
	}
	tx := make([]types.TransactWriteItem, len(items))
	for i, it := range items {
		tx[i] = types.TransactWriteItem{Put: &types.Put{
			TableName:           aws.String(d.table),
			Item:                it,
			ConditionExpression: aws.String("attribute_not_exists(pk)"),
		}}
	}
	reasons, err := d.transact(ctx, op, tx)
	if err != nil {
		return err
	}
	if reasons != nil {
		return fmt.Errorf("dynamodb: %s: %w", op, driver.ErrAlreadyExists)
	}
	d.kinds.put(rec.ID, rec.Kind)
	return nil
}

// Retract implements driver.Driver: one TransactWriteItems that sets the meta
// item's retracted on condition it exists and is not retracted, and moves the
// status item to status_v + 1, {state: retracted, retracted_at}. When the
// meta condition fails, the returned meta item tells the two cases apart:
// none means ErrNotFound, retracted means there is nothing to do.
func (d *Driver) Retract(ctx context.Context, id driver.ID, at time.Time) error {
	if err := d.begin(ctx); err != nil {
		return err
	}
	pk, op := id.String(), "retract "+id.String()
	tx, err := d.retractItems(pk, at)
	if err != nil {
		return fmt.Errorf("dynamodb: %s: %w", op, err)
	}
	reasons, err := d.transact(ctx, op, tx)
	if err != nil || reasons == nil {
		return err
	}
	if reasons[0].Code != nil && *reasons[0].Code == "ConditionalCheckFailed" {
		if len(reasons[0].Item) == 0 {
			return fmt.Errorf("dynamodb: %s: %w", op, driver.ErrNotFound)
		}
		return nil // already retracted
	}
	return malformed(pk, skStatus, "missing, or without status_v, under a meta item")
}

func (d *Driver) retractItems(pk string, at time.Time) ([]types.TransactWriteItem, error) {
	now := numberAV(d.nowMS())
	metaCond := expression.And(itemExists(), expression.Or(isNullish(attrRetracted),
		nameB(attrRetracted).Equal(valueB(&types.AttributeValueMemberBOOL{Value: false}))))
	metaUpd := expression.Set(nameB(attrRetracted), valueB(&types.AttributeValueMemberBOOL{Value: true})).
		Set(nameB(attrUpdatedAt), valueB(now))
	meta, err := expression.NewBuilder().WithCondition(metaCond).WithUpdate(metaUpd).Build()
	if err != nil {
		return nil, err
	}
	retractedMeta, err := mapAV(extrasOf(driver.RetractedStatus(at), keyState))
	if err != nil {
		return nil, err
	}
	statusUpd := expression.Set(nameB(attrStatusV), nameB(attrStatusV).Plus(valueB(numberAV(1)))).
		Set(nameB(attrStatus), valueB(stringAV(driver.StateRetracted))).
		Set(nameB(attrStatusState), valueB(indexedState(driver.StateRetracted))).
		Set(nameB(attrStatusMeta), valueB(retractedMeta)).
		Set(nameB(attrUpdatedAt), valueB(now))
	status, err := expression.NewBuilder().
		WithCondition(expression.And(itemExists(), nameB(attrStatusV).AttributeExists())).
		WithUpdate(statusUpd).Build()
	if err != nil {
		return nil, err
	}
	return []types.TransactWriteItem{
		{Update: d.txUpdate(pk, skMeta, meta)},
		{Update: d.txUpdate(pk, skStatus, status)},
	}, nil
}

func (d *Driver) txUpdate(pk, sk string, e expression.Expression) *types.Update {
	return &types.Update{
		TableName:                           aws.String(d.table),
		Key:                                 keyOf(pk, sk),
		ConditionExpression:                 e.Condition(),
		UpdateExpression:                    e.Update(),
		ExpressionAttributeNames:            e.Names(),
		ExpressionAttributeValues:           e.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
}

// Delete implements driver.Driver: a consistent Query of the record's keys,
// then one TransactWriteItems deleting them all, each on condition it still
// exists, so that no reader sees half a record and exactly one of racing
// deletes succeeds. A failed condition means another delete (perhaps
// followed by a create) got there first: the keys are queried again, and
// an empty partition returns an error wrapping driver.ErrNotFound.
func (d *Driver) Delete(ctx context.Context, id driver.ID) error {
	if err := d.begin(ctx); err != nil {
		return err
	}
	pk, op := id.String(), "delete "+id.String()
	for attempt := 0; attempt < maxTxAttempts; attempt++ {
		items, err := d.queryPK(ctx, op, pk, true)
		if err != nil {
			return err
		}
		if len(items) == 0 {
			return fmt.Errorf("dynamodb: %s: %w", op, driver.ErrNotFound)
		}
		var tx []types.TransactWriteItem
		for sk := range items {
			tx = append(tx, types.TransactWriteItem{Delete: &types.Delete{
				TableName: aws.String(d.table), Key: keyOf(pk, sk),
				ConditionExpression: aws.String("attribute_exists(pk)"),
			}})
		}
		done, err := d.deleteItems(ctx, op, tx)
		if err != nil {
			return err
		}
		if done {
			d.kinds.forget(id)
			return nil
		}
	}
	return fmt.Errorf("dynamodb: %s: %w: the record kept changing under %d attempts", op, driver.ErrUnavailable, maxTxAttempts)
}

// deleteItems runs tx in transactions of at most 100 items (DynamoDB's
// limit; a record has 5, a damaged partition may hold more). It reports
// false when a condition failed: another delete got there first.
func (d *Driver) deleteItems(ctx context.Context, op string, tx []types.TransactWriteItem) (bool, error) {
	for len(tx) > 0 {
		n := min(len(tx), 100)
		reasons, err := d.transact(ctx, op, tx[:n])
		if err != nil || reasons != nil {
			return false, err
		}
		tx = tx[n:]
	}
	return true, nil
}

// transact runs a TransactWriteItems. It returns the cancellation reasons
// when the transaction was cancelled by a condition, and nil reasons when it
// succeeded. It retries, with a new token and backoff, cancellations caused
// by conflicting transactions or writes, and resends with the same token
// (idempotently) after a lost answer.
func (d *Driver) transact(ctx context.Context, op string, tx []types.TransactWriteItem) ([]types.CancellationReason, error) {
	return d.transactN(ctx, op, tx, maxTxAttempts)
}

// transactN is transact with at most attempts tries of a conflicting
// transaction.
func (d *Driver) transactN(ctx context.Context, op string, tx []types.TransactWriteItem, attempts int) ([]types.CancellationReason, error) {
	in := &dynamodb.TransactWriteItemsInput{TransactItems: tx, ClientRequestToken: aws.String(newToken())}
	resends := 0
	for attempt := 0; ; attempt++ {
		_, err := d.client.TransactWriteItems(ctx, in)
		if err == nil {
			return nil, nil
		}
		var tce *types.TransactionCanceledException
		switch {
		case errors.As(err, &tce) && hasReason(tce.CancellationReasons, "ConditionalCheckFailed"):
			telemetry.PreconditionFailed(ctx, "ConditionalCheckFailed")
			return tce.CancellationReasons, nil
		case errors.As(err, &tce) && attempt+1 < attempts && retryableCancel(tce.CancellationReasons):
			in.ClientRequestToken = aws.String(newToken()) // the cancelled attempt wrote nothing
			telemetry.Retry(ctx, "transaction conflict")
			if err := backoff.Sleep(ctx, backoff.Jitter(20*time.Millisecond, 500*time.Millisecond, attempt)); err != nil {
				return nil, err
			}
		case errors.As(err, &tce):
			return nil, d.failCancel(ctx, op, tce.CancellationReasons, err)
		case maybeApplied(err) && ctx.Err() == nil && resends < maxResends:
			resends++
			telemetry.Retry(ctx, "answer lost")
		default:
			return nil, d.fail(ctx, op, err)
		}
	}
}

func hasReason(reasons []types.CancellationReason, code string) bool {
	for _, r := range reasons {
		if aws.ToString(r.Code) == code {
			return true
		}
	}
	return false
}

// retryableCancel reports whether a cancelled transaction may succeed when
// sent again: it lost to a concurrent transaction or write, or was throttled.
func retryableCancel(reasons []types.CancellationReason) bool {
	return hasReason(reasons, "TransactionConflict") || hasReason(reasons, "ThrottlingError") ||
		hasReason(reasons, "ProvisionedThroughputExceeded") || hasReason(reasons, "RequestLimitExceeded")
}

func (d *Driver) failCancel(ctx context.Context, op string, reasons []types.CancellationReason, err error) error {
	switch {
	case ctx.Err() != nil:
		return d.fail(ctx, op, err)
	case hasReason(reasons, "ValidationError"):
		return fmt.Errorf("dynamodb: %s: %w: DynamoDB rejected the transaction: %w", op, driver.ErrInvalidArgument, err)
	case retryableCancel(reasons) && !hasReason(reasons, "TransactionConflict"):
		return fmt.Errorf("dynamodb: %s: %w: %w", op, driver.ErrThrottled, err)
	}
	return fmt.Errorf("dynamodb: %s: %w: %w", op, driver.ErrUnavailable, err)
}

// Get implements driver.Driver with one consistent Query of the record's
// partition.
func (d *Driver) Get(ctx context.Context, id driver.ID) (*driver.Record, error) {
	if err := d.begin(ctx); err != nil {
		return nil, err
	}
	pk, op := id.String(), "get "+id.String()
	items, err := d.queryPK(ctx, op, pk, false)
	if err != nil {
		return nil, err
	}
	rec, err := decodeRecord(pk, items)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, fmt.Errorf("dynamodb: %s: %w", op, driver.ErrNotFound)
	}
	d.kinds.put(id, rec.Kind)
	return rec, nil
}

// queryPK returns the items of partition pk by sort key, read consistently;
// keysOnly fetches only the keys.
func (d *Driver) queryPK(ctx context.Context, op, pk string, keysOnly bool) (map[string]item, error) {
	b := expression.NewBuilder().WithKeyCondition(expression.Key(attrPK).Equal(expression.Value(stringAV(pk))))
	if keysOnly {
		b = b.WithProjection(expression.NamesList(nameB(attrPK), nameB(attrSK)))
	}
	expr, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("dynamodb: %s: %w: build expression: %v", op, driver.ErrInternal, err)
	}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(d.table),
		KeyConditionExpression:    expr.KeyCondition(),
		ProjectionExpression:      expr.Projection(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
		ConsistentRead:            aws.Bool(true),
	}
	items := map[string]item{}
	for {
		out, err := d.client.Query(ctx, in)
		if err != nil {
			return nil, d.fail(ctx, op, err)
		}
		for _, it := range out.Items {
			if sk, ok := getString(it, attrSK); ok {
				items[sk] = it
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			return items, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// Collect implements driver.Collector: a purge deletes every item of the
// record in one transaction, so there is never anything to collect.
func (d *Driver) Collect(ctx context.Context, _ driver.CollectOptions) (driver.CollectStats, error) {
	return driver.CollectStats{}, d.begin(ctx)
}

var _ driver.Collector = (*Driver)(nil)
