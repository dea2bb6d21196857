package dynamodb

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/model"
)

// DefaultPageSize is the page size of List when none is asked for.
const DefaultPageSize = 100

// maxBatchKeys is DynamoDB's limit of keys per BatchGetItem.
const maxBatchKeys = 100

// DefaultListParallel is the default of Config.ListParallel.
const DefaultListParallel = 8

// MaxListParallel bounds the URL's list_parallel: each is a goroutine with
// a request in flight (a Scan segment, a batch call), as in the object
// stores' drivers.
const MaxListParallel = 256

// maxStalledBatches bounds the batch retries that make no progress.
const maxStalledBatches = 5

// candidate is a record the GSI lists for a page.
type candidate struct {
	pk   string
	kind model.Kind // "" when the GSI lists it under both kinds (a stale entry)
}

// List implements driver.Driver. It queries gsi1-kind (or, by state or
// source type, see stateCandidates) for up to PageSize+1 entries after the
// page token, then reads the page's records with consistent BatchGetItem
// calls and filters again on what they hold. The GSI is eventually
// consistent: a record whose items are all gone was purged and is left out;
// one with items missing or unreadable goes to Page.Failed.
func (d *Driver) List(ctx context.Context, opts driver.ListOptions) (*driver.Page, error) {
	if err := d.begin(ctx); err != nil {
		return nil, err
	}
	after, size, err := driverutil.PageStart(opts, DefaultPageSize)
	if err != nil {
		return nil, err
	}
	var cands []candidate
	var next string
	switch {
	case opts.State != "":
		cands, next, err = d.stateCandidates(ctx, opts, after, size)
	case opts.SourceType != "":
		cands, next, err = d.sourceTypeCandidates(ctx, opts, after, size)
	default:
		cands, next, err = d.pageOf(ctx, kindSources(opts), opts, after, size)
	}
	if err != nil {
		return nil, err
	}
	page := &driver.Page{NextPageToken: driverutil.EncodePageToken(next)} // "" encodes as ""
	var keys []item
	for _, c := range cands {
		for _, sk := range sortKeys(c.kind) { // a ledger's for "": every sort key either kind uses
			keys = append(keys, keyOf(c.pk, sk))
		}
	}
	byPK, err := d.batchGetAll(ctx, keys)
	if err != nil {
		return nil, err
	}
	for _, c := range cands {
		items := byPK[c.pk]
		if k, ok := getString(items[skMeta], attrKind); ok && c.kind != "" && model.Kind(k) != c.kind {
			continue // recreated as the other kind since the GSI entry was written
		}
		// No items at all: purged since the GSI entry was written.
		switch r, err := decodeRecord(c.pk, items); {
		case err != nil:
			id, _ := model.ParseID(c.pk)
			page.Failed = append(page.Failed, &model.RecordError{ID: id, Object: "items of pk " + c.pk,
				Err: fmt.Errorf("dynamodb: list: %w", err)})
		case r != nil && opts.Matches(r):
			page.Records = append(page.Records, r)
			d.kinds.put(r.ID, r.Kind)
		}
	}
	return page, nil
}

// gsiSource is one partition of an index that List reads candidates from.
type gsiSource struct {
	index string     // the index
	hash  string     // its partition key attribute
	value string     // the partition read
	sk    string     // the sort key of the items it holds
	kind  model.Kind // the kind of the records it lists; "" when it cannot tell
}

// kindSources returns the partitions of gsi1-kind a listing reads.
func kindSources(opts driver.ListOptions) []gsiSource {
	var srcs []gsiSource
	for _, k := range []model.Kind{model.Ledger, model.GraphSource} {
		if (opts.Kind == "" || opts.Kind == k) && (opts.SourceType == "" || k == model.GraphSource) {
			srcs = append(srcs, gsiSource{index: IndexName, hash: attrKind, value: string(k), sk: skMeta, kind: k})
		}
	}
	return srcs
}

// pageOf returns the first size candidates after pk `after` of srcs, and
// the pk a next page starts after ("" when none follows).
func (d *Driver) pageOf(ctx context.Context, srcs []gsiSource, opts driver.ListOptions, after string, size int) ([]candidate, string, error) {
	cands, err := d.merged(ctx, srcs, opts, after, size+1)
	if err != nil || len(cands) <= size {
		return cands, "", err
	}
	return cands[:size], cands[size-1].pk, nil
}

// merged returns the first n candidates after pk `after` of srcs, by pk.
func (d *Driver) merged(ctx context.Context, srcs []gsiSource, opts driver.ListOptions, after string, n int) ([]candidate, error) {
	var cands []candidate
	for _, src := range srcs {
		c, err := d.gsiPage(ctx, src, opts, after, n)
		if err != nil {
			return nil, err
		}
		cands = append(cands, c...)
	}
	cands = mergeCandidates(cands)
	return cands[:min(len(cands), n)], nil
}

func byPK(a, b candidate) int { return strings.Compare(a.pk, b.pk) }

// mergeCandidates sorts by pk and merges a pk listed under both kinds.
func mergeCandidates(cands []candidate) []candidate {
	slices.SortFunc(cands, byPK)
	out := cands[:0]
	for _, c := range cands {
		if n := len(out); n > 0 && out[n-1].pk == c.pk {
			out[n-1].kind = ""
			continue
		}
		out = append(out, c)
	}
	return out
}

// gsiPage returns up to want entries of src after pk `after` that opts
// selects by what the index shows (prefix, retracted, source type).
func (d *Driver) gsiPage(ctx context.Context, src gsiSource, opts driver.ListOptions, after string, want int) ([]candidate, error) {
	key := expression.Key(src.hash).Equal(expression.Value(stringAV(src.value)))
	if opts.Prefix != "" {
		key = key.And(expression.Key(attrPK).BeginsWith(opts.Prefix))
	}
	b := expression.NewBuilder().WithKeyCondition(key)
	if opts.SourceType != "" && src.hash == attrKind {
		// gsi1-kind projects source_type; an entry without it (an index
		// that does not project it) is kept, and filtered once read.
		var is []expression.ConditionBuilder
		for _, st := range storedSourceTypes(opts.SourceType) {
			is = append(is, nameB(attrSourceType).Equal(valueB(stringAV(st))))
		}
		b = b.WithFilter(expression.Or(nameB(attrSourceType).AttributeNotExists(), is[0], is[1:]...))
	}
	expr, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("dynamodb: list: %w: build expression: %v", model.ErrInternal, err)
	}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(d.table),
		IndexName:                 aws.String(src.index),
		KeyConditionExpression:    expr.KeyCondition(),
		FilterExpression:          expr.Filter(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
	}
	switch {
	case after == "":
	case strings.HasPrefix(after, opts.Prefix):
		in.ExclusiveStartKey = item{src.hash: stringAV(src.value), attrPK: stringAV(after), attrSK: stringAV(src.sk)}
	case after > opts.Prefix:
		return nil, nil // the token is past every ID with the prefix
	}
	var cands []candidate
	for len(cands) < want {
		in.Limit = aws.Int32(int32(min(want-len(cands), 1000)))
		if in.FilterExpression != nil {
			in.Limit = aws.Int32(1000) // the filter may leave few: read on in large pages
		}
		out, err := d.client.Query(ctx, in)
		if err != nil {
			return nil, d.fail(ctx, "list "+src.value+" (query "+src.index+")", err)
		}
		for _, it := range out.Items {
			pk, _ := getString(it, attrPK)
			if isRetracted(it) && !opts.IncludeRetracted {
				continue
			}
			cands = append(cands, candidate{pk: pk, kind: src.kind})
		}
		if len(out.LastEvaluatedKey) == 0 {
			break
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	return cands, nil
}

// batchGetAll reads keys in consistent BatchGetItem calls, at most
// d.parallel() in flight, and returns the items by pk and sk.
func (d *Driver) batchGetAll(ctx context.Context, keys []item) (map[string]map[string]item, error) {
	byPK := map[string]map[string]item{}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(d.parallel())
	for batch := range slices.Chunk(keys, maxBatchKeys) {
		g.Go(func() error {
			var got []item
			err := untilProcessed(gctx, "list", "BatchGetItem", "keys", batch, func(keys []item) ([]item, error) {
				req := map[string]types.KeysAndAttributes{d.table: {Keys: keys, ConsistentRead: aws.Bool(true)}}
				out, err := d.client.BatchGetItem(gctx, &dynamodb.BatchGetItemInput{RequestItems: req})
				if err != nil {
					return nil, d.fail(gctx, "list (BatchGetItem)", err)
				}
				got = append(got, out.Responses[d.table]...)
				return out.UnprocessedKeys[d.table].Keys, nil
			})
			mu.Lock()
			defer mu.Unlock()
			for _, it := range got {
				pk, _ := getString(it, attrPK)
				sk, _ := getString(it, attrSK)
				if byPK[pk] == nil {
					byPK[pk] = map[string]item{}
				}
				byPK[pk][sk] = it
			}
			return err
		})
	}
	return byPK, g.Wait()
}

func (d *Driver) parallel() int { return driverutil.Positive(d.listParallel, DefaultListParallel) }

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
	if indexedState(opts.State) != nil && d.indexes(ctx)[StateIndexName] {
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
// sources of type opts.SourceType: a Query of source-type-index for each
// form the type may be stored in (storedSourceTypes), else one of gsi1-kind
// filtered on the source_type it projects.
func (d *Driver) sourceTypeCandidates(ctx context.Context, opts driver.ListOptions, after string, size int) ([]candidate, string, error) {
	if opts.Kind == model.Ledger {
		return nil, "", nil // ledgers have no source type
	}
	if len(opts.SourceType) <= maxIndexKeyBytes && d.indexes(ctx)[SourceTypeIndexName] {
		var srcs []gsiSource
		for _, st := range storedSourceTypes(opts.SourceType) {
			srcs = append(srcs, gsiSource{index: SourceTypeIndexName, hash: attrSourceType, value: st, sk: skMeta, kind: model.GraphSource})
		}
		return d.pageOf(ctx, srcs, opts, after, size)
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

// walkState returns a page of stateCandidates after pk `after` by walking
// gsi1-kind and reading the status items.
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
