package dynamodb

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/backoff"
	"nameservice.dev/nameservice/internal/telemetry"
)

// maxResends bounds how often Update resends a write whose answer was lost.
const maxResends = 8

// Update implements driver.Driver with one conditional UpdateItem. Its
// condition is attribute_exists(pk) and, for Above, watermark < next.V; for
// AtLeast, watermark <= next.V; for Equals, the watermark and every payload
// attribute equal to the expected value's (see layout.equals). The request
// asks for the item back when the condition fails, so a stale or conflicting
// push costs the same one request and reports the current value; an empty
// item back means the record (or the concern) does not exist.
//
// Two cases cost more requests: a config push for a record whose kind this
// client has not seen yet and that turns out to be a graph source (one more),
// and a compare-and-set whose expected value equals the stored one by value
// but not by representation, such as JSON text written by another client (one
// more).
//
// When an attempt's answer is lost (connection broken after sending, timeout,
// 5xx), the SDK does not retry it; Update resends at once, up to maxResends
// times. Every write records its random write ID (with the watermark it
// writes) among the item's last three write IDs, so a resend whose condition
// fails on an item holding its ID reports Applied, and one whose item proves
// the lost attempt never happened reports the conflict. Only when three later
// writes at higher watermarks have pushed the ID out is the outcome unknown:
// Update then returns an error wrapping driver.ErrUnavailable that says so. It
// never reports a conflict for a write that landed.
//
// A head update that applied with a content ID is followed, as in Fluree,
// by one PutItem of its commit-index row (see indexCommit).
func (d *Driver) Update(ctx context.Context, id driver.ID, c driver.Concern, cond driver.Condition, next driver.Value) (driver.Outcome, error) {
	if err := d.begin(ctx); err != nil {
		return driver.Outcome{}, err
	}
	if !c.Valid() {
		return driver.Outcome{}, fmt.Errorf("dynamodb: %w: unknown concern %d", driver.ErrInvalidArgument, c)
	}
	u := &update{d: d, id: id, pk: id.String(), c: c, cond: cond, next: next,
		token: newToken(), layout: layoutFor(c, d.kinds.get(id))}
	out, err := u.run(ctx)
	if err == nil && out.Applied && c == driver.Head {
		d.indexCommit(ctx, u.pk, next) // as Fluree does after a head update applied
	}
	return out, err
}

// update is the state of one Update call.
type update struct {
	d     *Driver
	id    driver.ID
	pk    string
	c     driver.Concern
	cond  driver.Condition
	next  driver.Value
	token string // this call's write ID

	layout    layout
	exact     item // when set, the condition is "the item holds exactly these attributes"
	ambiguous bool // an earlier attempt may have been applied
	resends   int
	switched  bool // the config layout was corrected once
}

func (u *update) op() string { return fmt.Sprintf("update %s %s", u.pk, u.c) }

func (u *update) run(ctx context.Context) (driver.Outcome, error) {
	for {
		in, err := u.input()
		if err != nil {
			return driver.Outcome{}, fmt.Errorf("dynamodb: %s: %w", u.op(), err)
		}
		opts := conditionalWriteOptions
		if u.ambiguous {
			opts = resolvingWriteOptions
		}
		_, err = u.d.client.UpdateItem(ctx, in, opts)
		if err == nil {
			u.d.noteConfigKind(u.id, u.layout)
			return driver.Outcome{Applied: true, Current: u.next.Clone()}, nil
		}
		var ccf *types.ConditionalCheckFailedException
		if errors.As(err, &ccf) {
			telemetry.PreconditionFailed(ctx, "ConditionalCheckFailed")
			out, again, err := u.conditionFailed(ccf.Item)
			if again {
				telemetry.Retry(ctx, "condition corrected")
				continue
			}
			return out, err
		}
		if ctx.Err() == nil && u.resends < maxResends {
			if maybeApplied(err) {
				u.ambiguous = true
				u.resends++
				telemetry.Retry(ctx, "answer lost")
				continue
			}
			if u.ambiguous && refused(err) {
				// Throttled while resolving: wait only briefly, since every
				// later write to the item makes the earlier attempt harder to
				// recognise (see writtenSince).
				u.resends++
				telemetry.Retry(ctx, "throttled")
				if err := backoff.Sleep(ctx, backoff.Jitter(time.Millisecond, 20*time.Millisecond, u.resends)); err != nil {
					return driver.Outcome{}, u.d.fail(ctx, u.op(), err)
				}
				continue
			}
		}
		if u.ambiguous {
			err = fmt.Errorf("outcome unknown after %d attempts whose answers were lost or refused: %w", u.resends+1, err)
		}
		return driver.Outcome{}, u.d.fail(ctx, u.op(), err)
	}
}

// conditionFailed interprets the item a failed condition returned. again is
// true when the request should be sent again with a corrected condition.
func (u *update) conditionFailed(it item) (out driver.Outcome, again bool, err error) {
	if len(it) == 0 {
		return out, false, fmt.Errorf("dynamodb: %s: %w: no %s item", u.op(), driver.ErrNotFound, u.layout.sk)
	}
	if hasWriteID(it, u.writeID()) {
		return driver.Outcome{Applied: true, Current: u.next.Clone()}, false, nil
	}
	if u.c == driver.Config && !u.switched {
		if actual := configLayoutOf(it); actual.shape != u.layout.shape {
			u.layout, u.switched = actual, true
			u.d.noteConfigKind(u.id, actual)
			return out, true, nil
		}
	}
	cur, err := u.layout.decode(u.pk, it)
	if err != nil {
		return out, false, err
	}
	if u.cond.Kind == driver.Equals && u.exact == nil && cur.Equal(u.cond.Expected) {
		u.exact = it // equal by value, not by representation
		return out, true, nil
	}
	if u.ambiguous {
		if cur.Equal(u.next) {
			return driver.Outcome{Applied: true, Current: cur}, false, nil
		}
		if mayHaveBeenOverwritten(it, u.cond.Kind, u.next.V) {
			return out, false, fmt.Errorf("dynamodb: %s: %w: outcome unknown: an answer was lost and %s has since been written three times at higher watermarks",
				u.op(), driver.ErrUnavailable, u.layout.describe(u.pk))
		}
	}
	return driver.Outcome{Current: cur}, false, nil
}

// input builds the UpdateItem request.
func (u *update) input() (*dynamodb.UpdateItemInput, error) {
	attrs, err := u.layout.encode(u.next)
	if err != nil {
		return nil, err
	}
	upd, written := u.updateExpr(attrs)
	if err := checkSize(u.pk, u.layout.sk, written); err != nil {
		return nil, err
	}
	expr, err := expression.NewBuilder().WithCondition(u.condition()).WithUpdate(upd).Build()
	if err != nil {
		return nil, fmt.Errorf("%w: build expression: %v", driver.ErrInternal, err)
	}
	return &dynamodb.UpdateItemInput{
		TableName:                           aws.String(u.d.table),
		Key:                                 keyOf(u.pk, u.layout.sk),
		ConditionExpression:                 expr.Condition(),
		UpdateExpression:                    expr.Update(),
		ExpressionAttributeNames:            expr.Names(),
		ExpressionAttributeValues:           expr.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}, nil
}

// updateExpr sets the watermark and payload attributes (removing those the
// value leaves absent), updated_at_ms and the write IDs. It also returns the
// attributes it writes with the key, for the size check.
func (u *update) updateExpr(attrs map[string]types.AttributeValue) (expression.UpdateBuilder, item) {
	written := keyOf(u.pk, u.layout.sk)
	now := numberAV(u.d.nowMS())
	upd := expression.Set(nameB(attrUpdatedAt), valueB(now))
	for _, n := range sortedNames(attrs) {
		if attrs[n] == nil {
			upd = upd.Remove(nameB(n))
			continue
		}
		upd = upd.Set(nameB(n), valueB(attrs[n]))
		written[n] = attrs[n]
	}
	upd = pushWriteID(upd, u.writeID())
	written[attrUpdatedAt] = now
	for _, n := range []string{attrWriteID, attrWriteID1, attrWriteID2} {
		written[n] = stringAV(u.writeID())
	}
	return upd, written
}

// condition returns the update's condition: the item exists, the caller's
// condition holds, and (for config) the item has the layout being written.
func (u *update) condition() expression.ConditionBuilder {
	var c expression.ConditionBuilder
	next := numberAV(u.next.V)
	switch {
	case u.exact != nil:
		c = u.layout.exactly(u.exact)
	case u.cond.Kind == driver.Above:
		c = nameB(u.layout.wm).LessThan(valueB(next))
	case u.cond.Kind == driver.AtLeast:
		c = nameB(u.layout.wm).LessThanEqual(valueB(next))
	case u.cond.Kind == driver.Equals:
		var ok bool
		if c, ok = u.layout.equals(u.cond.Expected); !ok {
			return never()
		}
	default:
		return never()
	}
	if w, ok := u.layout.witness(); ok {
		return expression.And(itemExists(), c, w)
	}
	return expression.And(itemExists(), c)
}

// noteConfigKind records the record kind a config layout implies.
func (d *Driver) noteConfigKind(id driver.ID, l layout) {
	switch l.shape {
	case sourceConfigShape:
		d.kinds.put(id, driver.GraphSource)
	case ledgerConfigShape:
		d.kinds.put(id, driver.Ledger)
	}
}

// writeID is what this call records in the item: its random token and the
// watermark it writes.
func (u *update) writeID() string { return u.token + "@" + formatInt(u.next.V) }

// pushWriteID makes id the item's newest write ID, keeping the two before.
func pushWriteID(upd expression.UpdateBuilder, id string) expression.UpdateBuilder {
	none := stringAV("")
	return upd.Set(nameB(attrWriteID2), nameB(attrWriteID1).IfNotExists(valueB(none))).
		Set(nameB(attrWriteID1), nameB(attrWriteID).IfNotExists(valueB(none))).
		Set(nameB(attrWriteID), valueB(stringAV(id)))
}

func hasWriteID(it item, id string) bool {
	for _, n := range []string{attrWriteID, attrWriteID1, attrWriteID2} {
		if s, ok := getString(it, n); ok && s == id {
			return true
		}
	}
	return false
}

// mayHaveBeenOverwritten reports whether a write of watermark v whose write
// ID the item does not hold may nevertheless have been applied and then
// pushed out of the item's last three write IDs. It may only if all three
// are set and were written after it: every write after one at v has a
// watermark above v (at or above v for AtLeast), so a remembered write at or
// below that (or a free slot) proves the write at v never happened.
func mayHaveBeenOverwritten(it item, k driver.CondKind, v int64) bool {
	for _, n := range []string{attrWriteID, attrWriteID1, attrWriteID2} {
		s, _ := getString(it, n)
		if s == "" {
			return false
		}
		i := strings.LastIndexByte(s, '@')
		w, err := strconv.ParseInt(s[i+1:], 10, 64)
		if i < 0 || err != nil {
			return true // written by something else: assume the worst
		}
		if w < v || (w == v && k != driver.AtLeast) {
			return false
		}
	}
	return true
}
