package dynamodb

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/model"
)

// branchTxAttempts bounds the tries of a branch transaction that lost to
// concurrent ones: every create and drop of one source's branches updates
// the source's meta item, so they conflict with each other by design.
const branchTxAttempts = 40

// CreateBranch implements driver.Brancher with one TransactWriteItems: the
// source's branches + 1 on condition it is a live ledger (Fluree adds it in
// a second, unconditional request; a count below 0 is set to 1, in one more
// transaction), and Create's puts. The source's
// cancellation reason (with its item) says whether the source or the ID was
// at fault. A resend writes nothing, as Create's does.
func (d *Driver) CreateBranch(ctx context.Context, rec *model.Record) (*model.Record, error) {
	if err := d.begin(ctx); err != nil {
		return nil, err
	}
	op := "create branch " + rec.ID.String()
	now := d.nowMS()
	w := driver.WriteOf(ctx)
	if w.Resend {
		err := d.resend(ctx, op, w, "create branch", rec.ID, func(meta item) bool { return incarnationOf(meta) == w.ID })
		if err != nil {
			return nil, err
		}
		return rec, nil
	}
	puts, err := d.createPuts(rec, now, w.ID)
	if err != nil {
		return nil, fmt.Errorf("dynamodb: %s: %w", op, err)
	}
	src := model.ID{Name: rec.ID.Name, Branch: rec.SourceBranch}
	belowZero := false
	for attempt := 0; ; attempt++ {
		count, err := d.countUpdate(src, 1, now, belowZero)
		if err != nil {
			return nil, fmt.Errorf("dynamodb: %s: %w", op, err)
		}
		tx := append([]types.TransactWriteItem{{Update: count}}, puts...)
		reasons, err := d.transact(ctx, op, tx, txToken(w, "create branch", rec.ID, 0), branchTxAttempts)
		switch {
		case err != nil:
			return nil, err
		case reasons == nil:
			return rec, nil
		case !failed(reasons[0]):
			return nil, fmt.Errorf("dynamodb: %s: %w", op, model.ErrAlreadyExists)
		}
		// The source refused: a count on the other side of 0 than the
		// update expected is tried again (a cancelled transaction leaves
		// no token behind); anything else is the source's fault.
		it := reasons[0].Item
		n, _, nerr := getInt(it, attrBranches)
		if nerr != nil || (n < 0) == belowZero || !liveLedger(it) || attempt+1 >= maxTxAttempts {
			return nil, sourceRefused(op, src, it)
		}
		belowZero = n < 0
	}
}

// liveLedger reports whether meta item it is a ledger's, not retracted.
func liveLedger(it item) bool {
	k, _ := getString(it, attrKind)
	return k == string(model.Ledger) && !isRetracted(it)
}

func failed(r types.CancellationReason) bool { return aws.ToString(r.Code) == "ConditionalCheckFailed" }

// sourceRefused explains why the source's condition failed, from its item.
func sourceRefused(op string, src model.ID, it item) error {
	if len(it) == 0 {
		return fmt.Errorf("dynamodb: %s: source %s: %w", op, src, model.ErrNotFound)
	}
	if k, _ := getString(it, attrKind); k != string(model.Ledger) {
		return fmt.Errorf("dynamodb: %s: %w: source %s is a %s", op, model.ErrWrongKind, src, k)
	}
	return fmt.Errorf("dynamodb: %s: %w: source %s is retracted", op, model.ErrNotFound, src)
}

// countUpdate adds delta (1 or -1) to the branches of src's meta item. An
// increment needs a live ledger; a count below 0 (Fluree's drop_branch
// decrements without a floor) means none, so the increment of one sets 1
// (belowZero), and of any other adds 1. A decrement needs a count above 0.
func (d *Driver) countUpdate(src model.ID, delta int64, nowMS int64, belowZero bool) (*types.Update, error) {
	b, zero, one := nameB(attrBranches), valueB(numberAV(0)), valueB(numberAV(1))
	upd, cond := expression.Set(b, b.Minus(one)), expression.And(itemExists(), b.GreaterThan(zero))
	if delta > 0 {
		upd, cond = expression.Set(b, expression.Plus(b.IfNotExists(zero), one)), expression.Or(b.AttributeNotExists(), b.GreaterThanEqual(zero))
		if belowZero {
			upd, cond = expression.Set(b, one), b.LessThan(zero)
		}
		cond = expression.And(itemExists(), nameB(attrKind).Equal(valueB(stringAV(string(model.Ledger)))),
			expression.Or(nameB(attrRetracted).AttributeNotExists(),
				nameB(attrRetracted).Equal(valueB(&types.AttributeValueMemberBOOL{Value: false}))), cond)
	}
	return d.txUpdate(src.String(), skMeta, cond, upd.Set(nameB(attrUpdatedAt), valueB(numberAV(nowMS))))
}

// DropBranch implements driver.Brancher: when the record's branches are 0,
// it deletes the partition's other rows as Delete does, and in one
// TransactWriteItems the record's items (the meta item on condition its
// count is still 0) with the source's count - 1 (see sourceDecrement). A
// failed condition (a concurrent create or drop) reads again. A resend
// writes nothing, as Delete's does.
func (d *Driver) DropBranch(ctx context.Context, id model.ID) error {
	if err := d.begin(ctx); err != nil {
		return err
	}
	pk, op := id.String(), "drop branch "+id.String()
	w := driver.WriteOf(ctx)
	if w.Resend {
		return d.resend(ctx, op, w, "drop branch", id, nil)
	}
	swept := false
	for range branchTxAttempts {
		items, err := d.queryRecord(ctx, op, pk)
		if err != nil {
			return err
		}
		tx, err := d.dropItems(ctx, op, id, items)
		if err != nil {
			return err
		}
		if !swept {
			_, rows, err := d.partitionKeys(ctx, op, pk)
			if err == nil {
				err = d.deleteRows(ctx, op, pk, rows)
			}
			if err != nil {
				return err
			}
			swept = true
		}
		reasons, err := d.transact(ctx, op, tx, txToken(w, "drop branch", id, 0), branchTxAttempts)
		if err != nil {
			return err
		}
		if reasons == nil {
			d.purged(ctx, op, id)
			return nil
		}
	}
	return fmt.Errorf("dynamodb: %s: %w: the record or its source kept changing under %d attempts", op, model.ErrUnavailable, branchTxAttempts)
}

// dropItems checks the record read as items and returns the transaction
// that drops it.
func (d *Driver) dropItems(ctx context.Context, op string, id model.ID, items map[string]item) ([]types.TransactWriteItem, error) {
	pk := id.String()
	if len(items) == 0 {
		return nil, fmt.Errorf("dynamodb: %s: %w", op, model.ErrNotFound)
	}
	m, err := decodeMeta(id, items)
	switch {
	case err != nil:
		return nil, err
	case m.Kind != model.Ledger:
		return nil, fmt.Errorf("dynamodb: %s: %w: %s is a %s, not a branch", op, model.ErrWrongKind, id, m.Kind)
	case m.Branches > 0:
		return nil, fmt.Errorf("dynamodb: %w", &driverutil.BranchesError{ID: id, N: m.Branches})
	}
	tx := []types.TransactWriteItem{{Delete: &types.Delete{
		TableName: aws.String(d.table), Key: keyOf(pk, skMeta),
		ConditionExpression:       aws.String("attribute_exists(#pk) AND (attribute_not_exists(#b) OR #b <= :zero)"),
		ExpressionAttributeNames:  map[string]string{"#pk": attrPK, "#b": attrBranches},
		ExpressionAttributeValues: map[string]types.AttributeValue{":zero": numberAV(0)},
	}}}
	if src := (model.ID{Name: id.Name, Branch: m.SourceBranch}); m.SourceBranch != "" && src != id {
		op, err := d.sourceDecrement(ctx, op, src)
		if err != nil {
			return nil, err
		}
		tx = append(tx, op)
	}
	for sk := range items {
		if sk != skMeta && isRecordSK(sk) {
			tx = append(tx, types.TransactWriteItem{Delete: &types.Delete{
				TableName: aws.String(d.table), Key: keyOf(pk, sk), ConditionExpression: aws.String("attribute_exists(pk)"),
			}})
		}
	}
	return tx, nil
}

// sourceDecrement returns the part of a drop's transaction that concerns
// the source: a decrement when its count is above 0, else a check that the
// source is still gone or still at 0.
func (d *Driver) sourceDecrement(ctx context.Context, op string, src model.ID) (types.TransactWriteItem, error) {
	meta, err := d.getItem(ctx, op, src.String(), skMeta)
	if err != nil {
		return types.TransactWriteItem{}, err
	}
	if n, _, err := getInt(meta, attrBranches); err == nil && n > 0 {
		u, err := d.countUpdate(src, -1, d.nowMS(), false)
		return types.TransactWriteItem{Update: u}, err
	}
	return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName: aws.String(d.table), Key: keyOf(src.String(), skMeta),
		ConditionExpression:       aws.String("attribute_not_exists(#pk) OR attribute_not_exists(#b) OR attribute_type(#b, :null) OR #b <= :zero"),
		ExpressionAttributeNames:  map[string]string{"#pk": attrPK, "#b": attrBranches},
		ExpressionAttributeValues: map[string]types.AttributeValue{":zero": numberAV(0), ":null": stringAV("NULL")},
	}}, nil
}

// ResetHead implements driver.Brancher with one TransactWriteItems updating
// the head item (and the index item), each on condition it still holds
// exactly what was read, so that the record returned is the one replaced.
// The items get a new incarnation (see resetUpdate).
func (d *Driver) ResetHead(ctx context.Context, id model.ID, head model.Value, index *model.Value) (*model.Record, error) {
	if err := d.begin(ctx); err != nil {
		return nil, err
	}
	pk, op := id.String(), "reset head "+id.String()
	w := driver.WriteOf(ctx)
	for range maxTxAttempts {
		items, err := d.queryRecord(ctx, op, pk)
		if err != nil {
			return nil, err
		}
		rec, err := decodeRecord(pk, items)
		switch {
		case err != nil:
			return nil, err
		case rec == nil:
			return nil, fmt.Errorf("dynamodb: %s: %w", op, model.ErrNotFound)
		case rec.Kind != model.Ledger:
			return nil, fmt.Errorf("dynamodb: %s: %w: %s is a %s and has no head", op, model.ErrWrongKind, id, rec.Kind)
		}
		tx, err := d.resetItems(pk, items, head, index)
		if err != nil {
			return nil, fmt.Errorf("dynamodb: %s: %w", op, err)
		}
		reasons, err := d.transact(ctx, op, tx, txToken(w, "reset head", id, 0), maxTxAttempts)
		if err != nil || reasons == nil {
			d.incs.forget(pk)
			return rec, err
		}
	}
	return nil, fmt.Errorf("dynamodb: %s: %w: the head kept changing under %d attempts", op, model.ErrUnavailable, maxTxAttempts)
}

func (d *Driver) resetItems(pk string, items map[string]item, head model.Value, index *model.Value) ([]types.TransactWriteItem, error) {
	tok := "reset" + driverutil.Token()
	u, err := d.resetUpdate(pk, headLayout, items[skHead], head, tok)
	if err != nil || index == nil {
		return []types.TransactWriteItem{{Update: u}}, err
	}
	ui, err := d.resetUpdate(pk, indexLayout, items[skIndex], *index, tok)
	// The index first: a driver that cannot write both at once does so.
	return []types.TransactWriteItem{{Update: ui}, {Update: u}}, err
}

// resetUpdate sets the item of layout l, as read in cur, to v.
func (d *Driver) resetUpdate(pk string, l layout, cur item, v model.Value, writeID string) (*types.Update, error) {
	attrs, err := l.encode(v)
	if err != nil {
		return nil, err
	}
	// A new incarnation: the watermarks moved back, so a resolution of a
	// write sent before must not reason from their order (WriteIDs.NeverLanded).
	upd := setAttrs(expression.Set(nameB(attrUpdatedAt), valueB(numberAV(d.nowMS()))).
		Set(nameB(attrIncarnation), valueB(stringAV(writeID))), attrs)
	return d.txUpdate(pk, l.sk, l.exactly(cur), pushWriteID(upd, writeID))
}

// MigrateBranchAttributes renames the source_branch attribute that earlier
// versions of this driver wrote to Fluree's bp_source (kept when there is
// one), each item on condition it still holds the value scanned, and
// returns how many it changed. It is safe while clients write, and again.
func (d *Driver) MigrateBranchAttributes(ctx context.Context) (int, error) {
	if err := d.begin(ctx); err != nil {
		return 0, err
	}
	const op = "migrate branch attributes"
	in := &dynamodb.ScanInput{
		TableName:                 aws.String(d.table),
		FilterExpression:          aws.String("#sk = :meta AND attribute_exists(#old)"),
		ProjectionExpression:      aws.String("#pk, #sk, #old, #new"),
		ExpressionAttributeNames:  map[string]string{"#pk": attrPK, "#sk": attrSK, "#old": attrSourceBranch, "#new": attrBPSource},
		ExpressionAttributeValues: map[string]types.AttributeValue{":meta": stringAV(skMeta)},
		ConsistentRead:            aws.Bool(true),
	}
	n := 0
	err := d.scan(ctx, op, in, 1, func(it item) error {
		pk, _ := getString(it, attrPK)
		_, err := d.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String(d.table), Key: keyOf(pk, skMeta),
			UpdateExpression:          aws.String("SET #new = if_not_exists(#new, :old) REMOVE #old"),
			ConditionExpression:       aws.String("#old = :old"),
			ExpressionAttributeNames:  map[string]string{"#old": attrSourceBranch, "#new": attrBPSource},
			ExpressionAttributeValues: map[string]types.AttributeValue{":old": it[attrSourceBranch]},
		})
		if err == nil {
			n++
		} else if _, ok := errors.AsType[*types.ConditionalCheckFailedException](err); !ok {
			return d.fail(ctx, op+" "+pk, err)
		}
		return nil // a failed condition: the item changed since the scan
	})
	return n, err
}
