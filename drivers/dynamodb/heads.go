package dynamodb

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"nameservice.dev/nameservice/model"
)

// Heads implements driver.HeadsReader as Fluree's heads() does: one
// consistent Query of the head and index items. An item missing (a graph
// source, or a damaged ledger) costs one more read, Get, which tells.
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
