package dynamodb_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/dynamodb"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/model"
)

// BenchmarkListSelect lists by state and by source type on one table of
// its own (without a stream, which only slows DynamoDB Local's writes
// here): NS_BENCH_SELECT_LEDGERS ledgers (default 100,000), of which
// 50 are indexing, and NS_BENCH_SELECT_SOURCES graph sources (default
// 10,000), of which 50 are of type db:HnswIndex. First on the table as
// Provision makes it (no optional index: the driver scans), then after
// UpgradeTable added state-index and source-type-index. Each round runs
// the driver's whole listing (List page after page, default page size)
// and then the same selection made directly with the SDK: a parallel
// filtered Scan, or a Query of the index (or of gsi1-kind's graph sources
// filtered on source_type), then consistent BatchGetItem of the records'
// items. Each round runs three times; it reports the median time and the
// requests of each. Run it with
//
//	go test -run '^$' -bench 'ListSelect$' -benchtime 1x -timeout 90m ./drivers/dynamodb/
func BenchmarkListSelect(b *testing.B) {
	d, ctx := scaleDriver(b, noStream)
	ledgers, sources := envInt(b, "NS_BENCH_SELECT_LEDGERS", 100_000), envInt(b, "NS_BENCH_SELECT_SOURCES", 10_000)
	const matches = 50
	start := time.Now()
	seedSelect(b, d, ledgers, sources, matches)
	b.Logf("seeded %d ledgers and %d graph sources in %s", ledgers, sources, time.Since(start).Round(time.Second))
	run := func(b *testing.B) {
		ct := &countingTransport{base: http.DefaultTransport.(*http.Transport).Clone(), n: map[string]int{}, failed: map[string]int{}}
		cfg := testConfig(b)
		cfg.Table, cfg.HTTPClient = d.Table(), &http.Client{Transport: ct, Timeout: 5 * time.Minute}
		counted, err := dynamodb.Open(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		defer counted.Close()
		ix := indexed(b, ctx, d)
		for _, sel := range []struct {
			name string
			opts driver.ListOptions
		}{{"state", driver.ListOptions{State: "indexing"}}, {"source-type", driver.ListOptions{SourceType: "db:HnswIndex"}}} {
			var mine, raw []time.Duration
			var mineReqs, rawReqs int
			for range 3 {
				ct.take()
				t0 := time.Now()
				got, failed, err := testenv.ListAll(ctx, counted, sel.opts)
				mine = append(mine, time.Since(t0))
				mineReqs = ct.total()
				if err != nil || got != matches || failed != 0 {
					b.Fatalf("%s: listed %d (%d failed, %v), want %d", sel.name, got, failed, err, matches)
				}
				ct.take()
				t0 = time.Now()
				got, err = selectRaw(ctx, counted.Client(), d.Table(), sel.opts, ix)
				raw = append(raw, time.Since(t0))
				rawReqs = ct.total()
				if err != nil || got != matches {
					b.Fatalf("%s raw: read %d records (%v), want %d", sel.name, got, err, matches)
				}
			}
			b.ReportMetric(testenv.MedianMS(mine), sel.name+"-driver-ms")
			b.ReportMetric(testenv.MedianMS(raw), sel.name+"-raw-ms")
			b.ReportMetric(float64(mineReqs), sel.name+"-driver-requests")
			b.ReportMetric(float64(rawReqs), sel.name+"-raw-requests")
		}
		b.ReportMetric(0, "ns/op")
	}
	b.Run("without-indexes", func(b *testing.B) {
		for b.Loop() {
			run(b)
		}
	})
	start = time.Now()
	up, err := d.UpgradeTable(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("upgrade: %+v in %s", up, time.Since(start).Round(time.Second))
	b.Run("with-indexes", func(b *testing.B) {
		for b.Loop() {
			run(b)
		}
	})
}

func envInt(b *testing.B, name string, def int) int {
	if s := os.Getenv(name); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 50 {
			b.Fatalf("%s=%q: want a count of at least 50", name, s)
		}
		return n
	}
	return def
}

// indexed reports whether d's table has its optional indexes now.
func indexed(b *testing.B, ctx context.Context, d *dynamodb.Driver) bool {
	out, err := d.Client().DescribeTable(ctx, &awsdynamodb.DescribeTableInput{TableName: aws.String(d.Table())})
	if err != nil {
		b.Fatal(err)
	}
	return len(out.Table.GlobalSecondaryIndexes) == 3
}

// seedSelect writes the ledgers and graph sources of BenchmarkListSelect.
func seedSelect(b *testing.B, d *dynamodb.Driver, ledgers, sources, matches int) {
	b.Helper()
	putRecords(b, d, func(yield func(*model.Record) bool) {
		for i := range ledgers {
			r := model.NewLedger(model.ID{Name: fmt.Sprintf("sel/db%06d", i), Branch: "main"}, 1)
			if i%(ledgers/matches) == 0 {
				r.Status = &model.Value{V: 2, Payload: model.Object{"state": "indexing"}}
			}
			if !yield(r) {
				return
			}
		}
		for i := range sources {
			typ := "db:Bm25Index"
			if i%(sources/matches) == 0 {
				typ = "db:HnswIndex"
			}
			if !yield(model.NewGraphSource(model.ID{Name: fmt.Sprintf("sel/gs%05d", i), Branch: "main"}, typ, nil, nil, 1)) {
				return
			}
		}
	}, nil)
}

// selectRaw makes, with the SDK alone, the selection of opts (State or
// SourceType) and reads the selected records' items consistently, and
// returns how many records it read.
func selectRaw(ctx context.Context, c *awsdynamodb.Client, table string, opts driver.ListOptions, indexed bool) (int, error) {
	var pks []string
	var err error
	sks := []string{"meta", "head", "index", "config", "status"} // the selected ledgers'
	if opts.State == "" {
		sks = []string{"meta", "index", "config", "status"} // the selected graph sources'
	}
	switch {
	case opts.State != "" && indexed:
		pks, err = queryPKs(ctx, c, &awsdynamodb.QueryInput{TableName: aws.String(table), IndexName: aws.String(dynamodb.StateIndexName),
			KeyConditionExpression:    aws.String("status_state = :s"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":s": s(opts.State)}})
	case opts.State != "":
		pks, err = scanPKs(ctx, c, table, opts.State)
	case indexed:
		pks, err = queryPKs(ctx, c, &awsdynamodb.QueryInput{TableName: aws.String(table), IndexName: aws.String(dynamodb.SourceTypeIndexName),
			KeyConditionExpression:    aws.String("source_type = :t"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":t": s(opts.SourceType)}})
	default:
		pks, err = queryPKs(ctx, c, &awsdynamodb.QueryInput{TableName: aws.String(table), IndexName: aws.String(dynamodb.IndexName),
			KeyConditionExpression: aws.String("kind = :k"), FilterExpression: aws.String("source_type = :t"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":k": s(string(model.GraphSource)), ":t": s(opts.SourceType)},
			Limit:                     aws.Int32(1000)})
	}
	if err != nil {
		return 0, err
	}
	var keys []map[string]types.AttributeValue
	for _, pk := range pks {
		for _, sk := range sks {
			keys = append(keys, map[string]types.AttributeValue{"pk": s(pk), "sk": s(sk)})
		}
	}
	got, err := batchGetCount(ctx, c, table, keys, dynamodb.DefaultListParallel)
	if err != nil {
		return 0, err
	}
	if want := int64(len(pks) * len(sks)); got != want {
		return 0, fmt.Errorf("read %d items of %d records, want %d", got, len(pks), want)
	}
	return len(pks), nil
}

func queryPKs(ctx context.Context, c *awsdynamodb.Client, in *awsdynamodb.QueryInput) ([]string, error) {
	var pks []string
	for {
		out, err := c.Query(ctx, in)
		if err != nil {
			return nil, err
		}
		for _, it := range out.Items {
			pks = append(pks, attr(it, "pk"))
		}
		if len(out.LastEvaluatedKey) == 0 {
			return pks, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// scanPKs scans the table in DefaultListParallel segments for the status
// items of state, as the driver does without state-index.
func scanPKs(ctx context.Context, c *awsdynamodb.Client, table, state string) ([]string, error) {
	var mu sync.Mutex
	var pks []string
	g, gctx := errgroup.WithContext(ctx)
	segs := int32(dynamodb.DefaultListParallel)
	for seg := range segs {
		g.Go(func() error {
			in := &awsdynamodb.ScanInput{TableName: aws.String(table), Segment: aws.Int32(seg), TotalSegments: aws.Int32(segs),
				FilterExpression: aws.String("sk = :sk AND #st = :s"), ProjectionExpression: aws.String("pk"),
				ExpressionAttributeNames:  map[string]string{"#st": "status"},
				ExpressionAttributeValues: map[string]types.AttributeValue{":sk": s("status"), ":s": s(state)}}
			for {
				out, err := c.Scan(gctx, in)
				if err != nil {
					return err
				}
				mu.Lock()
				for _, it := range out.Items {
					pks = append(pks, attr(it, "pk"))
				}
				mu.Unlock()
				if len(out.LastEvaluatedKey) == 0 {
					return nil
				}
				in.ExclusiveStartKey = out.LastEvaluatedKey
			}
		})
	}
	err := g.Wait()
	slices.Sort(pks)
	return pks, err
}

// noStream creates the table of in without its stream.
func noStream(in *awsdynamodb.CreateTableInput) { in.StreamSpecification = nil }
