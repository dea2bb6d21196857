package dynamodb

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/model"
)

var _ driver.HeadsReader = (*Driver)(nil)

// Heads implements driver.HeadsReader as Fluree's heads() does: one
// consistent Query of the record's sort keys head to index (the head and
// index items, nothing between them), projected to the attributes the two
// layouts read. No item at all means no record; an index without a head
// is a graph source, or a damaged ledger, which one more read (Get) tells
// apart on that error path only.
func (d *Driver) Heads(ctx context.Context, id model.ID) (model.Heads, error) {
	if err := d.begin(ctx); err != nil {
		return model.Heads{}, err
	}
	pk, op := id.String(), "heads "+id.String()
	names := map[string]string{"#pk": attrPK, "#sk": attrSK}
	proj := "#sk"
	for i, a := range headsAttributes() {
		n := fmt.Sprintf("#a%d", i)
		names[n] = a
		proj += ", " + n
	}
	out, err := d.client.Query(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(d.table),
		KeyConditionExpression:    aws.String("#pk = :pk AND #sk BETWEEN :head AND :index"),
		ProjectionExpression:      aws.String(proj),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": stringAV(pk), ":head": stringAV(skHead), ":index": stringAV(skIndex)},
		ConsistentRead:            aws.Bool(true),
	})
	if err != nil {
		return model.Heads{}, d.fail(ctx, op, err)
	}
	items := map[string]item{}
	for _, it := range out.Items {
		if sk, ok := getString(it, attrSK); ok {
			items[sk] = it
		}
	}
	head, hasHead := items[skHead]
	index, hasIndex := items[skIndex]
	switch {
	case !hasHead && !hasIndex:
		return model.Heads{}, fmt.Errorf("dynamodb: %s: %w", op, model.ErrNotFound)
	case !hasHead || !hasIndex:
		return d.headsOfRecord(ctx, id)
	}
	var h model.Heads
	for _, p := range []struct {
		l   layout
		c   model.Concern
		it  item
		dst *model.Value
	}{{headLayout, model.Head, head, &h.Head}, {indexLayout, model.Index, index, &h.Index}} {
		v, err := p.l.decode(pk, p.it)
		if err != nil {
			return model.Heads{}, err
		}
		if err := v.Validate(p.c); err != nil { // as decodeRecord checks the record
			return model.Heads{}, malformed(pk, p.l.sk, "%v", err)
		}
		*p.dst = v
	}
	return h, nil
}

// headsAttributes are the attributes the head and index layouts read.
func headsAttributes() []string {
	var names []string
	for _, l := range []layout{headLayout, indexLayout} {
		names = append(names, l.wm, l.cidAt)
		names = append(names, l.fields...)
	}
	return names
}

// headsOfRecord reads the whole record to say why it has no head and
// index: a graph source (ErrWrongKind), or damage (ErrInternal).
func (d *Driver) headsOfRecord(ctx context.Context, id model.ID) (model.Heads, error) {
	rec, err := d.Get(ctx, id)
	if err != nil {
		return model.Heads{}, err
	}
	return model.HeadsOf(rec)
}
