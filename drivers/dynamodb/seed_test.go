package dynamodb_test

import (
	"context"
	"iter"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"nameservice.dev/nameservice/drivers/dynamodb"
	"nameservice.dev/nameservice/model"
)

// putRecords writes the records recs yields, with the items Create would
// put, by BatchWriteItem: 25 items a call, 8 calls at once, each batch
// made as the calls go. edit, when not nil, may change each item first;
// n is the ordinal of its record in recs.
func putRecords(tb testing.TB, d *dynamodb.Driver, recs iter.Seq[*model.Record], edit func(n int, it map[string]types.AttributeValue)) {
	tb.Helper()
	batches := make(chan []types.WriteRequest, 16)
	g, ctx := errgroup.WithContext(context.Background())
	g.Go(func() error {
		defer close(batches)
		var batch []types.WriteRequest
		n := 0
		for r := range recs {
			items, err := dynamodb.RecordItems(r, 1)
			if err != nil {
				return err
			}
			for _, it := range items {
				if edit != nil {
					edit(n, it)
				}
				if batch = append(batch, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}}); len(batch) == 25 {
					select {
					case batches <- batch:
					case <-ctx.Done():
						return ctx.Err()
					}
					batch = nil
				}
			}
			n++
		}
		if len(batch) > 0 {
			batches <- batch
		}
		return nil
	})
	for range 8 {
		g.Go(func() error {
			for batch := range batches {
				req := map[string][]types.WriteRequest{d.Table(): batch}
				for len(req) > 0 {
					out, err := d.Client().BatchWriteItem(ctx, &awsdynamodb.BatchWriteItemInput{RequestItems: req})
					if err != nil {
						return err
					}
					req = out.UnprocessedItems
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		tb.Fatalf("put records: %v", err)
	}
}

// batchGetCount reads keys with consistent BatchGetItem calls of up to
// 100 keys, parallel at once, as List does, and returns how many items
// came back.
func batchGetCount(ctx context.Context, c *awsdynamodb.Client, table string, keys []map[string]types.AttributeValue, parallel int) (int64, error) {
	var got atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallel)
	for len(keys) > 0 {
		batch := keys[:min(len(keys), 100)]
		keys = keys[len(batch):]
		g.Go(func() error {
			req := map[string]types.KeysAndAttributes{table: {Keys: batch, ConsistentRead: aws.Bool(true)}}
			for len(req) > 0 {
				out, err := c.BatchGetItem(gctx, &awsdynamodb.BatchGetItemInput{RequestItems: req})
				if err != nil {
					return err
				}
				got.Add(int64(len(out.Responses[table])))
				req = out.UnprocessedKeys
			}
			return nil
		})
	}
	err := g.Wait()
	return got.Load(), err
}
