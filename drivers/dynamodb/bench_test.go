package dynamodb_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/dynamodb"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/model"
)

// The benchmarks time each driver operation next to the plain SDK request it
// wraps, alternating the two in one loop over one client, and report
// p50/p99 of each (in ms) and the ratios driver/raw. Run them with
//
//	go test -run '^$' -bench 'Push|Lookup' -benchtime 2000x ./drivers/dynamodb/

// BenchmarkPush compares a monotonic head publish (driver.Update) with a raw
// conditional UpdateItem doing the same write on another ledger's head.
func BenchmarkPush(b *testing.B) {
	d, ctx := benchDriver(b)
	id, rawID := benchLedger(b, d), benchLedger(b, d)
	key := map[string]types.AttributeValue{"pk": s(rawID.String()), "sk": s("head")}
	testenv.BenchVsRaw(b, "push", func(i int) {
		t := int64(i + 1)
		out, err := d.Update(ctx, id, model.Head, driver.IfAbove(), model.RefValue("c"+strconv.FormatInt(t, 10), t))
		if err != nil || !out.Applied {
			b.Fatalf("push: %v %v", out, err)
		}
	}, "raw-update", func(i int) {
		t := int64(i + 1)
		_, err := d.Client().UpdateItem(ctx, &awsdynamodb.UpdateItemInput{
			TableName:           aws.String(d.Table()),
			Key:                 key,
			ConditionExpression: aws.String("attribute_exists(pk) AND commit_t < :t"),
			UpdateExpression:    aws.String("SET commit_address = :a, commit_t = :t, updated_at_ms = :now"),
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":t": n(t), ":a": s("c" + strconv.FormatInt(t, 10)), ":now": n(time.Now().UnixMilli()),
			},
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		})
		if err != nil {
			b.Fatalf("raw UpdateItem: %v", err)
		}
	})
}

// BenchmarkLookup compares Get (a consistent Query of the partition, decoded
// into a record) with the raw consistent Query.
func BenchmarkLookup(b *testing.B) {
	d, ctx := benchDriver(b)
	id := benchLedger(b, d)
	testenv.BenchVsRaw(b, "lookup", func(int) {
		if _, err := d.Get(ctx, id); err != nil {
			b.Fatal(err)
		}
	}, "raw-query", func(int) {
		out, err := d.Client().Query(ctx, &awsdynamodb.QueryInput{
			TableName:                 aws.String(d.Table()),
			KeyConditionExpression:    aws.String("pk = :pk"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s(id.String())},
			ConsistentRead:            aws.Bool(true),
		})
		if err != nil || len(out.Items) != 5 {
			b.Fatalf("raw Query: %d items, %v", len(out.Items), err)
		}
	})
}

func benchDriver(b *testing.B) (*dynamodb.Driver, context.Context) {
	d, err := dynamodb.Open(context.Background(), testConfig(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = d.Close() })
	return d, context.Background()
}

func benchLedger(b *testing.B, d *dynamodb.Driver) model.ID {
	id, _ := model.ParseID("bench" + testenv.RandomHex(4) + "/db")
	if err := d.Create(context.Background(), model.NewLedger(id, 1)); err != nil {
		b.Fatal(err)
	}
	return id
}

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

func n(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}
