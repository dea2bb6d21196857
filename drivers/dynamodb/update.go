package dynamodb

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	lru "github.com/hashicorp/golang-lru/v2"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/awsconf"
	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/internal/telemetry"
	"nameservice.dev/nameservice/model"
)

// maxResends bounds Update's resends after lost answers.
const maxResends = 8

// Update implements driver.Driver with one UpdateItem, on condition that the
// item exists, is of the incarnation the driver saw (if any), lacks the
// write's ID, and that the caller's condition holds (see condition). A
// failed condition returns the item, so a stale or conflicting push costs
// the same one request. Each write records its write ID among the item's
// last three: after a lost answer, and for a resend, Update reads the item
// to tell applied, never landed and unknown apart (see resolve;
// docs/dynamodb.md, Lost answers).
func (d *Driver) Update(ctx context.Context, id model.ID, c model.Concern, cond driver.Condition, next model.Value) (driver.Outcome, error) {
	if err := d.begin(ctx); err != nil {
		return driver.Outcome{}, err
	}
	if !c.Valid() {
		return driver.Outcome{}, fmt.Errorf("dynamodb: %w: unknown concern %d", model.ErrInvalidArgument, c)
	}
	pk := id.String()
	u := &update{d: d, id: id, pk: pk, c: c, cond: cond, next: next, w: driver.WriteOf(ctx),
		layout: layoutFor(c, d.kinds.get(id))}
	u.inc = d.incs.get(pk, u.layout.sk)
	if u.inc == "" {
		u.adopt = driverutil.Token()
	}
	out, err := u.run(ctx)
	if err == nil && out.Applied && c == model.Head {
		d.indexCommit(ctx, pk, next) // as Fluree does after a head update applied
	}
	return out, err
}

// update is the state of one Update call.
type update struct {
	d    *Driver
	id   model.ID
	pk   string
	c    model.Concern
	cond driver.Condition
	next model.Value
	w    driver.Write

	layout layout
	// inc is the incarnation the attempts are conditioned on: the one the
	// driver saw last, "" when it has seen none. adopt is what an attempt
	// without one sets when the item has none: finding it proves that an
	// attempt landed.
	inc, adopt string
	exact      item // when set, the condition is "the item holds exactly these attributes"
	ambiguous  bool // an earlier attempt may have been applied
	resends    int
	retries    int  // attempts sent again after a condition that failed on an item since changed
	switched   bool // the config layout was corrected once
}

func (u *update) op() string { return fmt.Sprintf("update %s %s", u.pk, u.c) }

// run runs the update, first finding a resend's earlier attempt: it may
// have landed, perhaps by another process, on an incarnation this one
// cannot know, and only finding it decides.
func (u *update) run(ctx context.Context) (driver.Outcome, error) {
	if u.w.Resend {
		u.inc, u.adopt, u.ambiguous = "", "", true
		if out, again, err := u.resolve(ctx, errors.New("the write is a resend")); !again {
			return out, err
		}
	}
	for {
		in, err := u.input()
		if err != nil {
			return driver.Outcome{}, fmt.Errorf("dynamodb: %s: %w", u.op(), err)
		}
		res, err := u.d.client.UpdateItem(ctx, in, conditionalWriteOptions)
		if err == nil {
			return u.applied(res.Attributes), nil
		}
		var (
			out   driver.Outcome
			again bool
		)
		switch ccf, ok := errors.AsType[*types.ConditionalCheckFailedException](err); {
		case ok:
			telemetry.PreconditionFailed(ctx, "ConditionalCheckFailed")
			out, again, err = u.conditionFailed(ctx, ccf.Item)
		case awsconf.MaybeApplied(err) && ctx.Err() == nil:
			u.ambiguous = true
			telemetry.Retry(ctx, "answer lost")
			out, again, err = u.resolve(ctx, err)
		case u.ambiguous:
			err = u.unknown(ctx, err)
		default:
			err = u.d.fail(ctx, u.op(), err)
		}
		if !again {
			return out, err
		}
		telemetry.Retry(ctx, "condition corrected")
	}
}

// applied notes what a write that landed taught, the item's incarnation
// (returned when the write could adopt one) and the record's kind, and
// returns its outcome.
func (u *update) applied(it item) driver.Outcome {
	if inc := incarnationOf(it); inc != "" {
		u.d.incs.put(u.pk, u.layout.sk, inc)
	}
	u.d.noteConfigKind(u.id, u.layout)
	return driver.Outcome{Applied: true, Current: u.next.Clone()}
}

// resolve establishes what became of the write after a lost answer (cause)
// or for a resend, from the item read now. again is true when the write
// provably never landed and may be sent again.
func (u *update) resolve(ctx context.Context, cause error) (out driver.Outcome, again bool, err error) {
	if u.resends >= maxResends {
		return out, false, u.unknown(ctx, cause)
	}
	u.resends++
	it, err := u.d.getItem(ctx, u.op(), u.pk, u.layout.sk)
	if err != nil {
		return out, false, u.unknown(ctx, fmt.Errorf("%v; reading the item back failed: %w", cause, err))
	}
	return u.decide(ctx, cause, it)
}

// decide is resolve's judgement on item it (nil: absent).
func (u *update) decide(ctx context.Context, cause error, it item) (out driver.Outcome, again bool, err error) {
	switch {
	case it == nil:
		return out, false, u.unknown(ctx, fmt.Errorf("%v; the record has been purged since", cause))
	case writeIDsOf(it).Has(u.w.ID) || u.adopt != "" && incarnationOf(it) == u.adopt:
		return u.applied(it), false, nil
	case u.inc == "":
		return out, false, u.unknown(ctx, fmt.Errorf("%v; the write is not in %s, and this client cannot tell whether the record was purged and created again since", cause, u.layout.describe(u.pk)))
	case incarnationOf(it) != u.inc:
		return out, false, u.unknown(ctx, fmt.Errorf("%v; %s was created again since", cause, u.layout.describe(u.pk)))
	}
	cur, err := u.layout.decode(u.pk, it)
	if err != nil {
		return out, false, err
	}
	if !writeIDsOf(it).NeverLanded(cur.V, u.next.V, u.c != model.Index) {
		return out, false, u.unknown(ctx, fmt.Errorf("%v; %s has been written three times since, at watermarks that could have overwritten the write", cause, u.layout.describe(u.pk)))
	}
	if u.cond.Holds(cur, u.next) {
		return out, true, nil
	}
	return driver.Outcome{Current: cur}, false, nil
}

func (u *update) unknown(ctx context.Context, cause error) error {
	if ctx.Err() != nil {
		return u.d.fail(ctx, u.op(), cause)
	}
	return fmt.Errorf("dynamodb: %s: %w", u.op(), driver.OutcomeUnknown("%v", cause))
}

// conditionFailed interprets the item a failed condition returned. again is
// true when the request should be sent again with a corrected condition.
func (u *update) conditionFailed(ctx context.Context, it item) (out driver.Outcome, again bool, err error) {
	if len(it) == 0 {
		// Some DynamoDB-compatible servers return no item: read it.
		if it, err = u.d.getItem(ctx, u.op(), u.pk, u.layout.sk); err != nil {
			return out, false, err
		}
	}
	switch {
	case u.ambiguous:
		if out, again, err = u.decide(ctx, errors.New("a resend was refused"), it); !again {
			return out, false, err
		}
		// It never landed, and the item refused it though it holds a
		// value the condition accepts: send it again as below.
		return u.holdsYetRefused(it)
	case it == nil:
		return out, false, fmt.Errorf("dynamodb: %s: %w: no %s item", u.op(), model.ErrNotFound, u.layout.sk)
	case writeIDsOf(it).Has(u.w.ID):
		return u.applied(it), false, nil
	}
	u.inc = incarnationOf(it)
	u.d.incs.put(u.pk, u.layout.sk, u.inc)
	if u.c == model.Config && !u.switched {
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
	if u.cond.Holds(cur, u.next) {
		return u.holdsYetRefused(it)
	}
	return driver.Outcome{Current: cur}, false, nil
}

// holdsYetRefused answers a condition that failed on item it, whose value
// the caller's condition accepts: the request is sent again, a bounded
// number of times.
func (u *update) holdsYetRefused(it item) (out driver.Outcome, again bool, err error) {
	if u.cond.Kind == driver.Equals && u.exact == nil {
		u.exact = it // equal by value, not by representation
		return out, true, nil
	}
	// The item changed since the condition failed (created again, or
	// read back after a condition that found none): the attempt wrote
	// nothing, and "not applied" would name a value it did not fail on.
	if u.retries++; u.retries > maxResends {
		return out, false, fmt.Errorf("dynamodb: %s: %w: the item kept changing under %d attempts", u.op(), model.ErrUnavailable, u.retries)
	}
	return out, true, nil
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
		return nil, fmt.Errorf("%w: build expression: %v", model.ErrInternal, err)
	}
	in := &dynamodb.UpdateItemInput{
		TableName:                           aws.String(u.d.table),
		Key:                                 keyOf(u.pk, u.layout.sk),
		ConditionExpression:                 expr.Condition(),
		UpdateExpression:                    expr.Update(),
		ExpressionAttributeNames:            expr.Names(),
		ExpressionAttributeValues:           expr.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		ReturnValues:                        types.ReturnValueNone,
	}
	if u.inc == "" {
		in.ReturnValues = types.ReturnValueUpdatedNew // the incarnation the write may adopt
	}
	return in, nil
}

// updateExpr sets the watermark and payload attributes (removing those the
// value leaves absent), updated_at_ms and the write IDs. It also returns the
// attributes it writes with the key, for the size check.
func (u *update) updateExpr(attrs map[string]types.AttributeValue) (expression.UpdateBuilder, item) {
	now := numberAV(u.d.nowMS())
	upd := pushWriteID(setAttrs(expression.Set(nameB(attrUpdatedAt), valueB(now)), attrs), u.writeID())
	written := withAttrs(keyOf(u.pk, u.layout.sk), attrs)
	if u.inc == "" && u.adopt != "" {
		upd = upd.Set(nameB(attrIncarnation), nameB(attrIncarnation).IfNotExists(valueB(stringAV(u.adopt))))
		written[attrIncarnation] = stringAV(u.adopt)
	}
	written[attrUpdatedAt] = now
	for _, n := range writeIDs {
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
	more := []expression.ConditionBuilder{lacksWriteID(u.writeID())}
	if u.inc != "" {
		more = append(more, incarnationIs(u.inc))
	}
	if w, ok := u.layout.witness(); ok {
		more = append(more, w)
	}
	return expression.And(itemExists(), c, more...)
}

// noteConfigKind records the record kind a config layout implies.
func (d *Driver) noteConfigKind(id model.ID, l layout) {
	switch l.shape {
	case sourceConfigShape:
		d.kinds.put(id, model.GraphSource)
	case ledgerConfigShape:
		d.kinds.put(id, model.Ledger)
	}
}

// writeID is what this call records in the item: its write ID and the
// watermark it writes.
func (u *update) writeID() string { return driverutil.WriteTag(u.w.ID, u.next.V) }

// An item's incarnation names its life: Create's write ID, a new one from
// ResetHead (which moves watermarks back), or one an update adopts on an
// item without (written by Fluree). Every conditional write carries the
// incarnation seen, so that a resend never lands on an item created since.
//
// incCache remembers the incarnation last seen of each item. A stale entry
// costs one failed condition, whose returned item corrects it.
type incCache struct{ *lru.Cache[string, string] }

// maxCachedIncarnations bounds the cache; the least recently used go first.
const maxCachedIncarnations = 200_000

func incKey(pk, sk string) string { return pk + "\x00" + sk }

func (c incCache) get(pk, sk string) string {
	inc, _ := c.Get(incKey(pk, sk))
	return inc
}

// put records inc as item pk/sk's incarnation; "" forgets it.
func (c incCache) put(pk, sk, inc string) {
	if inc == "" {
		c.Remove(incKey(pk, sk))
	} else {
		c.Add(incKey(pk, sk), strings.Clone(inc))
	}
}

// forget drops every item of pk.
func (c incCache) forget(pk string) {
	for _, sk := range sortKeys(model.Ledger) {
		c.put(pk, sk, "")
	}
}

// incarnationOf returns the incarnation an item holds, "" for none.
func incarnationOf(it item) string {
	s, _ := getString(it, attrIncarnation)
	return s
}

// incarnationIs is the condition "the item is of incarnation inc".
func incarnationIs(inc string) expression.ConditionBuilder {
	return nameB(attrIncarnation).Equal(valueB(stringAV(inc)))
}

// writeIDs are the attributes holding an item's last three write IDs,
// newest first.
var writeIDs = []string{attrWriteID, attrWriteID1, attrWriteID2}

// pushWriteID makes id the item's newest write ID, keeping the two before.
func pushWriteID(upd expression.UpdateBuilder, id string) expression.UpdateBuilder {
	none := stringAV("")
	return upd.Set(nameB(attrWriteID2), nameB(attrWriteID1).IfNotExists(valueB(none))).
		Set(nameB(attrWriteID1), nameB(attrWriteID).IfNotExists(valueB(none))).
		Set(nameB(attrWriteID), valueB(stringAV(id)))
}

// lacksWriteID is the condition "id is none of the item's write IDs": an
// attempt of a write that landed already can never land again.
func lacksWriteID(id string) expression.ConditionBuilder {
	v := valueB(stringAV(id))
	return expression.Not(expression.Or(nameB(attrWriteID).Equal(v), nameB(attrWriteID1).Equal(v), nameB(attrWriteID2).Equal(v)))
}

// writeIDsOf returns the write IDs item it records.
func writeIDsOf(it item) driverutil.WriteIDs {
	var h driverutil.WriteIDs
	for i, n := range writeIDs {
		h[i], _ = getString(it, n)
	}
	return h
}

// getItem reads one item consistently; nil when absent.
func (d *Driver) getItem(ctx context.Context, op, pk, sk string) (item, error) {
	out, err := d.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(d.table), Key: keyOf(pk, sk), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, d.fail(ctx, op, err)
	}
	if len(out.Item) == 0 {
		return nil, nil
	}
	return out.Item, nil
}
