package dynamodb

import (
	"context"
	"slices"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/model"
)

// Listings by state and by source type (docs/dynamodb.md). List checks the
// records read (ListOptions.Matches), so a stale index entry lists nothing.

// A listing by state without state-index walks chunks of walkChunk
// candidates, at most walkBudget for one page.
const (
	walkChunk  = 1000
	walkBudget = 10 * walkChunk
)

// stateCandidates returns the candidates of a page of the records in state
// opts.State, and the pk the next page starts after: one Query of
// state-index; without it, a Scan filtered on status (which every writer
// keeps, Fluree included) for the first page, a walk for the next.
func (d *Driver) stateCandidates(ctx context.Context, opts driver.ListOptions, after string, size int) ([]candidate, string, error) {
	if indexedState(opts.State) != nil && d.indexes(ctx).state {
		src := gsiSource{index: StateIndexName, hash: attrStatusState, value: opts.State, sk: skStatus}
		return d.pageOf(ctx, []gsiSource{src}, opts, after, size)
	}
	d.warnCost("a listing by state", "its first page scans every item of the table, later pages read every record's status item")
	if after == "" {
		return d.scanState(ctx, opts, size)
	}
	return d.walkState(ctx, opts, after, size)
}

// sourceTypeCandidates returns the candidates of a page of the graph
// sources of type opts.SourceType: one Query of source-type-index, else of
// gsi1-kind filtered on the source_type it projects.
func (d *Driver) sourceTypeCandidates(ctx context.Context, opts driver.ListOptions, after string, size int) ([]candidate, string, error) {
	if opts.Kind == model.Ledger {
		return nil, "", nil // ledgers have no source type
	}
	if len(opts.SourceType) <= maxIndexKeyBytes && d.indexes(ctx).sourceType {
		src := gsiSource{index: SourceTypeIndexName, hash: attrSourceType, value: opts.SourceType, sk: skMeta, kind: model.GraphSource}
		return d.pageOf(ctx, []gsiSource{src}, opts, after, size)
	}
	d.warnCost("a listing by source type", "it reads the gsi1-kind entry of every graph source")
	return d.pageOf(ctx, kindSources(opts), opts, after, size)
}

// scanState returns the first page of stateCandidates by a parallel Scan.
func (d *Driver) scanState(ctx context.Context, opts driver.ListOptions, size int) ([]candidate, string, error) {
	filter := "#sk = :status AND #st = :state"
	vals := map[string]types.AttributeValue{":status": stringAV(skStatus), ":state": stringAV(opts.State)}
	if opts.Prefix != "" {
		filter += " AND begins_with(#pk, :prefix)"
		vals[":prefix"] = stringAV(opts.Prefix)
	}
	in := &dynamodb.ScanInput{
		TableName:                 aws.String(d.table),
		FilterExpression:          aws.String(filter),
		ProjectionExpression:      aws.String("#pk"),
		ExpressionAttributeNames:  map[string]string{"#pk": attrPK, "#sk": attrSK, "#st": attrStatus},
		ExpressionAttributeValues: vals,
	}
	var mu sync.Mutex
	var cands []candidate
	err := d.scan(ctx, "list by state", in, d.parallel(), func(it item) error {
		mu.Lock()
		defer mu.Unlock()
		if pk, ok := getString(it, attrPK); ok {
			cands = append(cands, candidate{pk: pk})
		}
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	slices.SortFunc(cands, byPK)
	if len(cands) <= size {
		return cands, "", nil
	}
	return cands[:size], cands[size-1].pk, nil
}

// walkState returns a page after pk `after` of stateCandidates by walking
// gsi1-kind and reading the status items, until the page is full or
// walkBudget records were read.
func (d *Driver) walkState(ctx context.Context, opts driver.ListOptions, after string, size int) ([]candidate, string, error) {
	var out []candidate
	for examined := 0; examined < walkBudget; {
		chunk, err := d.merged(ctx, kindSources(opts), opts, after, walkChunk+1)
		if err != nil {
			return nil, "", err
		}
		more := len(chunk) > walkChunk
		chunk = chunk[:min(len(chunk), walkChunk)]
		keep, err := d.inState(ctx, chunk, opts.State)
		if err != nil {
			return nil, "", err
		}
		out = append(out, keep...)
		if len(out) > size {
			return out[:size], out[size-1].pk, nil
		}
		if !more {
			return out, "", nil
		}
		examined += len(chunk)
		after = chunk[len(chunk)-1].pk
	}
	return out, after, nil // partial: the next page goes on from here
}

// inState returns the candidates whose status item holds state; one
// without a status item is kept, for List to judge.
func (d *Driver) inState(ctx context.Context, cands []candidate, state string) ([]candidate, error) {
	keys := make([]item, len(cands))
	for i, c := range cands {
		keys[i] = keyOf(c.pk, skStatus)
	}
	byPK, err := d.batchGetAll(ctx, keys)
	if err != nil {
		return nil, err
	}
	var out []candidate
	for _, c := range cands {
		it, ok := byPK[c.pk][skStatus]
		if st, _ := getString(it, attrStatus); !ok || st == state {
			out = append(out, c)
		}
	}
	return out, nil
}
