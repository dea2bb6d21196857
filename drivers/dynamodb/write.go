package dynamodb

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/awsconf"
	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/internal/telemetry"
	"nameservice.dev/nameservice/model"
)

// maxTxAttempts bounds the driver's own retries of a transaction cancelled
// because another transaction or write held one of its items.
const maxTxAttempts = 6

// Create implements driver.Driver: one TransactWriteItems putting every item
// of the record, each on condition attribute_not_exists(pk), with the
// create's write ID as incarnation. A failed condition means
// model.ErrAlreadyExists, unless the meta item returned is of this create's
// incarnation (an earlier attempt landed). A resend writes nothing (see
// resend): it is done when the record is of the create's incarnation.
func (d *Driver) Create(ctx context.Context, rec *model.Record) error {
	if err := d.begin(ctx); err != nil {
		return err
	}
	w := driver.WriteOf(ctx)
	op := "create " + rec.ID.String()
	if w.Resend {
		return d.resend(ctx, op, w, "create", rec.ID, func(meta item) bool { return incarnationOf(meta) == w.ID })
	}
	tx, err := d.createPuts(rec, d.nowMS(), w.ID)
	if err != nil {
		return fmt.Errorf("dynamodb: %s: %w", op, err)
	}
	reasons, err := d.transact(ctx, op, tx, txToken(w, "create", rec.ID, 0), maxTxAttempts)
	if err != nil {
		return err
	}
	if reasons != nil && incarnationOf(reasons[0].Item) != w.ID {
		return fmt.Errorf("dynamodb: %s: %w", op, model.ErrAlreadyExists)
	}
	d.kinds.put(rec.ID, rec.Kind)
	for _, sk := range sortKeys(rec.Kind) {
		d.incs.put(rec.ID.String(), sk, w.ID)
	}
	return nil
}

// createPuts returns the puts of the items of new record rec, of
// incarnation inc, each on condition attribute_not_exists(pk).
func (d *Driver) createPuts(rec *model.Record, nowMS int64, inc string) ([]types.TransactWriteItem, error) {
	items, err := recordItems(rec, nowMS, inc)
	tx := make([]types.TransactWriteItem, len(items))
	for i, it := range items {
		tx[i] = types.TransactWriteItem{Put: &types.Put{
			TableName:                           aws.String(d.table),
			Item:                                it,
			ConditionExpression:                 aws.String("attribute_not_exists(pk)"),
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		}}
	}
	return tx, err
}

// Retract implements driver.Driver: one TransactWriteItems setting the meta
// item's retracted and moving the status item to retracted, both on the
// incarnations this client saw. When the meta condition fails, the meta
// item returned tells: none is ErrNotFound, retracted is nothing to do,
// another incarnation is a record created again (the retract is tried on
// it). A resend writes nothing (see resend): it is done when the record is
// retracted.
func (d *Driver) Retract(ctx context.Context, id model.ID, at time.Time) error {
	if err := d.begin(ctx); err != nil {
		return err
	}
	pk, op := id.String(), "retract "+id.String()
	w := driver.WriteOf(ctx)
	if w.Resend {
		return d.resend(ctx, op, w, "retract", id, isRetracted)
	}
	incs := [2]string{d.incs.get(pk, skMeta), d.incs.get(pk, skStatus)}
	for range maxTxAttempts {
		tx, err := d.retractItems(pk, at, w, incs)
		if err != nil {
			return fmt.Errorf("dynamodb: %s: %w", op, err)
		}
		reasons, err := d.transact(ctx, op, tx, txToken(w, "retract", id, 0), maxTxAttempts)
		if err != nil || reasons == nil {
			return err
		}
		// An item comes back only with its failed condition (one at least:
		// transact returns the reasons of a failed condition only).
		meta, status := reasons[0].Item, reasons[1].Item
		switch {
		case failed(reasons[0]) && len(meta) == 0, failed(reasons[1]) && len(status) == 0:
			return fmt.Errorf("dynamodb: %s: %w", op, model.ErrNotFound)
		case failed(reasons[0]) && isRetracted(meta):
			return nil // already retracted: nothing to do
		}
		// Created again since this client saw it: the attempt wrote
		// nothing; try the record there is now.
		incs = [2]string{incarnationOf(meta), incarnationOf(status)}
		d.incs.put(pk, skMeta, incs[0])
		d.incs.put(pk, skStatus, incs[1])
	}
	return fmt.Errorf("dynamodb: %s: %w: the record kept changing under %d attempts", op, model.ErrUnavailable, maxTxAttempts)
}

// isRetracted reports whether a meta item (or its gsi1-kind entry) is retracted.
func isRetracted(it item) bool {
	r, ok := it[attrRetracted].(*types.AttributeValueMemberBOOL)
	return ok && r.Value
}

func (d *Driver) retractItems(pk string, at time.Time, w driver.Write, incs [2]string) ([]types.TransactWriteItem, error) {
	now := numberAV(d.nowMS())
	metaCond := expression.And(itemExists(), expression.Or(isNullish(attrRetracted),
		nameB(attrRetracted).Equal(valueB(&types.AttributeValueMemberBOOL{Value: false}))))
	statusCond := expression.And(itemExists(), nameB(attrStatusV).AttributeExists())
	if incs[0] != "" {
		metaCond = expression.And(metaCond, incarnationIs(incs[0]))
	}
	if incs[1] != "" {
		statusCond = expression.And(statusCond, incarnationIs(incs[1]))
	}
	meta, err := d.txUpdate(pk, skMeta, metaCond, expression.Set(nameB(attrRetracted),
		valueB(&types.AttributeValueMemberBOOL{Value: true})).Set(nameB(attrUpdatedAt), valueB(now)))
	if err != nil {
		return nil, err
	}
	retractedMeta, err := mapAV(extrasOf(model.RetractedStatus(at), keyState))
	if err != nil {
		return nil, err
	}
	statusUpd := expression.Set(nameB(attrStatusV), nameB(attrStatusV).Plus(valueB(numberAV(1)))).
		Set(nameB(attrStatus), valueB(stringAV(model.StateRetracted))).
		Set(nameB(attrStatusState), valueB(indexedState(model.StateRetracted))).
		Set(nameB(attrStatusMeta), valueB(retractedMeta)).
		Set(nameB(attrUpdatedAt), valueB(now))
	// The new status_v is not known here: the write ID records no
	// watermark, so that it proves nothing to an update resolving a lost
	// answer (see driverutil.WriteIDs.NeverLanded).
	status, err := d.txUpdate(pk, skStatus, statusCond, pushWriteID(statusUpd, w.ID+"@retract"))
	return []types.TransactWriteItem{{Update: meta}, {Update: status}}, err
}

// txUpdate returns a transaction's update of item pk/sk on condition cond,
// asking for the item back when cond fails.
func (d *Driver) txUpdate(pk, sk string, cond expression.ConditionBuilder,
	upd expression.UpdateBuilder) (*types.Update, error) {
	e, err := expression.NewBuilder().WithCondition(cond).WithUpdate(upd).Build()
	if err != nil {
		return nil, fmt.Errorf("%w: build expression: %v", model.ErrInternal, err)
	}
	return &types.Update{
		TableName:                           aws.String(d.table),
		Key:                                 keyOf(pk, sk),
		ConditionExpression:                 e.Condition(),
		UpdateExpression:                    e.Update(),
		ExpressionAttributeNames:            e.Names(),
		ExpressionAttributeValues:           e.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}, nil
}

// Delete implements driver.Driver (docs/dynamodb.md has its requests): the
// partition's other rows (Fluree's commit index) go with plain deletes, then
// the record's items in one transaction, each on the incarnation a keys-only
// Query saw, so that no reader sees half a record and one of racing deletes
// wins; a failed condition queries again. A resend writes nothing (see
// resend).
//
// The rows go first, while the record exists, so that a create racing the
// purge fails instead of seeing its new ledger's rows deleted under it. Rows
// written during the purge are caught by a last Query (see purged); one
// landing later stays, for Collect, DynamoDB TTL or another purge.
func (d *Driver) Delete(ctx context.Context, id model.ID) error {
	if err := d.begin(ctx); err != nil {
		return err
	}
	pk, op := id.String(), "delete "+id.String()
	w := driver.WriteOf(ctx)
	if w.Resend {
		return d.resend(ctx, op, w, "delete", id, nil)
	}
	for range maxTxAttempts {
		own, rows, err := d.partitionKeys(ctx, op, pk)
		if err != nil {
			return err
		}
		if err := d.deleteRows(ctx, op, pk, rows); err != nil {
			return err
		}
		if len(own) == 0 {
			return fmt.Errorf("dynamodb: %s: %w", op, model.ErrNotFound)
		}
		done, err := d.deleteItems(ctx, op, w, id, own)
		if err != nil {
			return err
		}
		if done {
			d.purged(ctx, op, id)
			return nil
		}
	}
	return fmt.Errorf("dynamodb: %s: %w: the record kept changing under %d attempts", op, model.ErrUnavailable, maxTxAttempts)
}

// resend resolves a resend (driver.Write.Resend) of a write of kind on
// record id without writing: it is done when own (nil: nothing can) says
// the record's meta item (nil: absent) shows it, or when its token shows
// that an earlier attempt landed (landedBefore); anything else wraps
// model.ErrOutcomeUnknown. Sending it again would not do: the token stops a
// second landing, not a first one after an attempt whose failure was
// answered (a create refused on one instance, the record purged, the resend
// landing on another: replicated campaign seed 2145108244).
func (d *Driver) resend(ctx context.Context, op string, w driver.Write, kind string, id model.ID, own func(meta item) bool) error {
	if own != nil {
		meta, err := d.getItem(ctx, op, id.String(), skMeta)
		if err != nil {
			return fmt.Errorf("dynamodb: %s: %w", op, driver.OutcomeUnknown("the write is a resend, and reading the record failed: %v", err))
		}
		if own(meta) {
			return nil
		}
	}
	landed, err := d.landedBefore(ctx, id, txToken(w, kind, id, 0))
	switch {
	case landed:
		return nil
	case err != nil:
		return fmt.Errorf("dynamodb: %s: %w", op, driver.OutcomeUnknown("the write is a resend, and checking whether an earlier attempt landed failed: %v", err))
	}
	return fmt.Errorf("dynamodb: %s: %w", op, driver.OutcomeUnknown("the write is a resend, and nothing shows that an earlier attempt of the %s landed: one may still be on its way, or have landed on a record purged since", kind))
}

// landedBefore reports whether an attempt of the write of token landed,
// without writing: under that token it sends a check that can never hold.
// DynamoDB answers IdempotentParameterMismatch when an attempt landed
// (within ten minutes); otherwise the check is cancelled, which leaves no
// token behind, so that an attempt still on its way lands for real.
func (d *Driver) landedBefore(ctx context.Context, id model.ID, token string) (bool, error) {
	never := aws.String("attribute_exists(pk) AND attribute_not_exists(pk)")
	check := []types.TransactWriteItem{{ConditionCheck: &types.ConditionCheck{
		TableName: aws.String(d.table), Key: keyOf(id.String(), skMeta), ConditionExpression: never,
	}}}
	in := &dynamodb.TransactWriteItemsInput{TransactItems: check, ClientRequestToken: aws.String(token)}
	_, err := d.client.TransactWriteItems(ctx, in, conditionalWriteOptions)
	if awsconf.ErrorCodeOf(err) == "IdempotentParameterMismatchException" {
		return true, nil
	}
	if _, cancelled := errors.AsType[*types.TransactionCanceledException](err); cancelled {
		return false, nil
	}
	return false, err
}

// deleteItems deletes items, each on condition it exists with the
// incarnation it has (or none), in transactions of at most 100 items
// (DynamoDB's limit), each with a token of its own. It reports false when a
// condition failed: another delete got there first.
func (d *Driver) deleteItems(ctx context.Context, op string, w driver.Write, id model.ID, items map[string]item) (bool, error) {
	pk := id.String()
	tx := make([]types.TransactWriteItem, 0, len(items))
	for _, sk := range slices.Sorted(maps.Keys(items)) {
		cond := expression.And(itemExists(), nameB(attrIncarnation).AttributeNotExists())
		if inc := incarnationOf(items[sk]); inc != "" {
			cond = expression.And(itemExists(), incarnationIs(inc))
		}
		e, err := expression.NewBuilder().WithCondition(cond).Build()
		if err != nil {
			return false, fmt.Errorf("dynamodb: %s: %w: build expression: %v", op, model.ErrInternal, err)
		}
		tx = append(tx, types.TransactWriteItem{Delete: &types.Delete{
			TableName: aws.String(d.table), Key: keyOf(pk, sk),
			ConditionExpression: e.Condition(), ExpressionAttributeNames: e.Names(), ExpressionAttributeValues: e.Values(),
		}})
	}
	part := 0
	for batch := range slices.Chunk(tx, 100) {
		reasons, err := d.transact(ctx, op, batch, txToken(w, "delete", id, part), maxTxAttempts)
		if err != nil || reasons != nil {
			return false, err
		}
		part++
	}
	return true, nil
}

// txToken returns the ClientRequestToken of part of a write of kind
// ("create", "delete", ...) on record id: the same for every attempt of
// the write, in any process, and different for every other write.
func txToken(w driver.Write, kind string, id model.ID, part int) string {
	h := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%s\x00%s\x00%d", w.ID, kind, id, part)))
	return hex.EncodeToString(h[:16]) // DynamoDB takes 1 to 36 characters
}

// transact runs a TransactWriteItems under token. It returns the
// cancellation reasons when a condition cancelled it, nil when it succeeded.
// It retries conflicts (with backoff: a cancelled transaction wrote
// nothing), up to attempts tries, and resends after a lost answer: the
// token makes the write land at most once (docs/dynamodb.md, Lost answers;
// IdempotentParameterMismatch is another process's attempt that landed).
func (d *Driver) transact(ctx context.Context, op string, tx []types.TransactWriteItem, token string, attempts int) ([]types.CancellationReason, error) {
	in := &dynamodb.TransactWriteItemsInput{TransactItems: tx, ClientRequestToken: aws.String(token)}
	resends := 0
	for attempt := 0; ; {
		_, err := d.client.TransactWriteItems(ctx, in, conditionalWriteOptions)
		if err == nil {
			return nil, nil
		}
		tce, cancelled := errors.AsType[*types.TransactionCanceledException](err)
		switch {
		case cancelled && hasReason(tce.CancellationReasons, "ConditionalCheckFailed"):
			telemetry.PreconditionFailed(ctx, "ConditionalCheckFailed")
			return tce.CancellationReasons, nil
		case cancelled && attempt+1 < attempts && retryableCancel(tce.CancellationReasons):
			attempt++
			telemetry.Retry(ctx, "transaction conflict")
			if err := driverutil.Sleep(ctx, driverutil.Jitter(20*time.Millisecond, 500*time.Millisecond, attempt-1)); err != nil {
				return nil, err
			}
		case cancelled:
			return nil, d.failCancel(ctx, op, tce.CancellationReasons, err)
		case awsconf.ErrorCodeOf(err) == "IdempotentParameterMismatchException":
			return nil, nil // an attempt of this write, from another process, landed
		case awsconf.MaybeApplied(err) && ctx.Err() == nil && resends < maxResends:
			resends++
			telemetry.Retry(ctx, "answer lost")
		case awsconf.MaybeApplied(err) && ctx.Err() == nil:
			return nil, fmt.Errorf("dynamodb: %s: %w", op, driver.OutcomeUnknown("%d attempts whose answers were lost: %v", resends+1, err))
		case resends > 0 && ctx.Err() == nil:
			// The resend was refused before DynamoDB weighed it (throttled,
			// not connected): the attempt whose answer was lost may have
			// landed.
			return nil, fmt.Errorf("dynamodb: %s: %w", op, driver.OutcomeUnknown("an attempt's answer was lost, and sending it again failed: %v", err))
		default:
			return nil, d.fail(ctx, op, err)
		}
	}
}

// hasReason reports whether one of reasons has one of codes.
func hasReason(reasons []types.CancellationReason, codes ...string) bool {
	return slices.ContainsFunc(reasons, func(r types.CancellationReason) bool {
		return slices.Contains(codes, aws.ToString(r.Code))
	})
}

// retryableCancel reports whether a cancelled transaction may succeed when
// sent again: it lost to a concurrent transaction or write, or was throttled.
func retryableCancel(reasons []types.CancellationReason) bool {
	return hasReason(reasons, "TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded",
		"RequestLimitExceeded")
}

func (d *Driver) failCancel(ctx context.Context, op string, reasons []types.CancellationReason, err error) error {
	switch {
	case ctx.Err() != nil:
		return d.fail(ctx, op, err)
	case hasReason(reasons, "ValidationError"):
		return fmt.Errorf("dynamodb: %s: %w: DynamoDB rejected the transaction: %w", op, model.ErrInvalidArgument, err)
	case retryableCancel(reasons) && !hasReason(reasons, "TransactionConflict"):
		return fmt.Errorf("dynamodb: %s: %w: %w", op, model.ErrThrottled, err)
	}
	return fmt.Errorf("dynamodb: %s: %w: %w", op, model.ErrUnavailable, err)
}

// Get implements driver.Driver with one consistent Query of the record's
// items (see queryRecord).
func (d *Driver) Get(ctx context.Context, id model.ID) (*model.Record, error) {
	if err := d.begin(ctx); err != nil {
		return nil, err
	}
	pk, op := id.String(), "get "+id.String()
	items, err := d.queryRecord(ctx, op, pk)
	if err != nil {
		return nil, err
	}
	rec, err := decodeRecord(pk, items)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, fmt.Errorf("dynamodb: %s: %w", op, model.ErrNotFound)
	}
	d.kinds.put(id, rec.Kind)
	for sk, it := range items {
		d.incs.put(pk, sk, incarnationOf(it))
	}
	return rec, nil
}

// queryRecord returns the record's own items of partition pk by sort key,
// read consistently. Its key condition, sk >= "config", is Fluree's: the
// record's sort keys sort after "config", commit-index rows ("commit#…")
// before, so it is one request however many rows the partition holds.
func (d *Driver) queryRecord(ctx context.Context, op, pk string) (map[string]item, error) {
	key := expression.Key(attrPK).Equal(expression.Value(stringAV(pk))).
		And(expression.Key(attrSK).GreaterThanEqual(expression.Value(stringAV(skConfig))))
	return d.queryItems(ctx, op, expression.NewBuilder().WithKeyCondition(key))
}

// queryItems returns the items of a consistent Query built by b, by sort
// key.
func (d *Driver) queryItems(ctx context.Context, op string, b expression.Builder) (map[string]item, error) {
	items := map[string]item{}
	err := d.query(ctx, op, b, func(it item) {
		if sk, ok := getString(it, attrSK); ok {
			items[sk] = it
		}
	})
	return items, err
}

// partitionKeys returns the rows of partition pk, read consistently: own
// are the record's items by sort key (keys and incarnation only), rows the
// others' sort keys.
func (d *Driver) partitionKeys(ctx context.Context, op, pk string) (own map[string]item, rows []string, err error) {
	b := expression.NewBuilder().WithKeyCondition(expression.Key(attrPK).Equal(expression.Value(stringAV(pk)))).
		WithProjection(expression.NamesList(nameB(attrPK), nameB(attrSK), nameB(attrIncarnation)))
	own = map[string]item{}
	err = d.query(ctx, op, b, func(it item) {
		sk, _ := getString(it, attrSK)
		if isRecordSK(sk) {
			own[sk] = it
		} else {
			rows = append(rows, sk)
		}
	})
	return own, rows, err
}

// isRecordSK reports whether sk is the sort key of one of a record's items.
func isRecordSK(sk string) bool {
	return slices.Contains(sortKeys(model.Ledger), sk)
}

// query runs a consistent Query built by b on the table, page by page,
// calling fn with each item.
func (d *Driver) query(ctx context.Context, op string, b expression.Builder, fn func(item)) error {
	expr, err := b.Build()
	if err != nil {
		return fmt.Errorf("dynamodb: %s: %w: build expression: %v", op, model.ErrInternal, err)
	}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(d.table),
		KeyConditionExpression:    expr.KeyCondition(),
		ProjectionExpression:      expr.Projection(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
		ConsistentRead:            aws.Bool(true),
	}
	for p := dynamodb.NewQueryPaginator(d.client, in); p.HasMorePages(); {
		out, err := p.NextPage(ctx)
		if err != nil {
			return d.fail(ctx, op, err)
		}
		for _, it := range out.Items {
			fn(it)
		}
	}
	return nil
}

// Heads implements driver.HeadsReader as Fluree's heads() does: one
// consistent Query of the head and index items. An item missing (a graph
// source, or a damaged ledger) costs one more read, Get, which tells.
func (d *Driver) Heads(ctx context.Context, id model.ID) (model.Heads, error) {
	if err := d.begin(ctx); err != nil {
		return model.Heads{}, err
	}
	pk, op := id.String(), "heads "+id.String()
	refs, proj := []layout{headLayout, indexLayout}, expression.NamesList(nameB(attrSK))
	for _, l := range refs {
		for _, a := range append([]string{l.wm, l.cidAt}, l.fields...) {
			proj = proj.AddNames(nameB(a))
		}
	}
	items, err := d.queryItems(ctx, op, expression.NewBuilder().WithKeyCondition(skRange(pk, skHead, skIndex)).WithProjection(proj))
	if err != nil {
		return model.Heads{}, err
	}
	_, hasHead := items[skHead]
	_, hasIndex := items[skIndex]
	switch {
	case !hasHead && !hasIndex:
		return model.Heads{}, fmt.Errorf("dynamodb: %s: %w", op, model.ErrNotFound)
	case !hasHead || !hasIndex:
		rec, err := d.Get(ctx, id)
		if err != nil {
			return model.Heads{}, err
		}
		return model.HeadsOf(rec)
	}
	var v [2]model.Value
	for i, l := range refs {
		if v[i], err = l.decode(pk, items[l.sk]); err != nil {
			return model.Heads{}, err
		}
		if err := v[i].Validate(concernOfSK(l.sk)); err != nil { // as decodeRecord checks the record
			return model.Heads{}, malformed(pk, l.sk, "%v", err)
		}
	}
	return model.Heads{Head: v[0], Index: v[1]}, nil
}

// ChangedAt implements driver.ChangeTimer from the updated_at_ms of the
// concerns' items, read consistently; an item without it is left out.
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
		if ms, ok, err := getInt(it, attrUpdatedAt); sk != skMeta && ok && err == nil {
			out[concernOfSK(sk)] = time.UnixMilli(ms)
		}
	}
	return out, nil
}
