package dynamodb

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

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
	proj := expression.NamesList(nameB(attrSK))
	for _, l := range []layout{headLayout, indexLayout} {
		for _, a := range append([]string{l.wm, l.cidAt}, l.fields...) {
			proj = proj.AddNames(nameB(a))
		}
	}
	items, err := d.queryItems(ctx, op, expression.NewBuilder().WithKeyCondition(skRange(pk, skHead, skIndex)).WithProjection(proj))
	if err != nil {
		return model.Heads{}, err
	}
	head, hasHead := items[skHead]
	index, hasIndex := items[skIndex]
	switch {
	case !hasHead && !hasIndex:
		return model.Heads{}, fmt.Errorf("dynamodb: %s: %w", op, model.ErrNotFound)
	case !hasHead || !hasIndex:
		// The record says why: a graph source (ErrWrongKind), or damage
		// (ErrInternal).
		rec, err := d.Get(ctx, id)
		if err != nil {
			return model.Heads{}, err
		}
		return model.HeadsOf(rec)
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
