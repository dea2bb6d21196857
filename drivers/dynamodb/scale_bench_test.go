package dynamodb_test

import (
	"context"
	"fmt"
	"net/http"
	neturl "net/url"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/dynamodb"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/model"
)

// The scale benchmarks list many records, and watch many records under a
// steady writer, on a table of their own (seeded with BatchWriteItem, not
// through Create, and deleted at the end). Run them with
//
//	NS_BENCH_LIST_SIZES=1000,10000,100000 go test -run '^$' -bench 'List$|Watch$' -benchtime 3x -timeout 60m ./drivers/dynamodb/
//
// NS_BENCH_LIST_SIZES defaults to 1000,10000; NS_BENCH_WATCH_FOR (default
// 15s) is how long each watcher of BenchmarkWatch runs.

// benchPageSize is the page size of the listing benchmarks: 500 records
// (2,500 keys, 25 BatchGetItem calls) per page and one GSI Query of 501.
const benchPageSize = 500

// BenchmarkList lists N ledgers through the driver (List, page after page,
// kind ledger) and, in the same loop, makes the same calls directly with
// the SDK: per page one GSI Query of PageSize+1 entries and ⌈keys/100⌉
// consistent BatchGetItem calls, DefaultListParallel at a time. It reports
// the median of each, their ratio, the peak RSS of `ns list` over the same
// ledgers, in pages of the same size, in a process of its own, and the heap
// the driver's listing left reachable (retained-MB, ~0 when nothing it read
// outlives the listing).
func BenchmarkList(b *testing.B) {
	d, ctx := scaleDriver(b)
	for _, n := range testenv.ListSizes(b) {
		prefix := fmt.Sprintf("list%d-%s/", n, testenv.RandomHex(2))
		seed(b, d, prefix, n)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			// The CLI's listing, first, also warms DynamoDB Local for both.
			url := fmt.Sprintf("dynamodb://%s?endpoint=%s", d.Table(), neturl.QueryEscape(testenv.DynamoDBEndpoint(b)))
			cliRSS := testenv.ListCLI(b, n, url, "--kind", "ledger", "--prefix", prefix, "--page-size", strconv.Itoa(benchPageSize))
			var mine, raw []time.Duration
			var retained float64
			for b.Loop() {
				before := liveHeapMB()
				start := time.Now()
				got, err := listDriver(ctx, d, prefix)
				mine = append(mine, time.Since(start))
				retained = max(retained, liveHeapMB()-before)
				wantListed(b, n, got, err)
				start = time.Now()
				got, err = listRaw(ctx, d.Client(), d.Table(), prefix, dynamodb.DefaultListParallel)
				raw = append(raw, time.Since(start))
				wantListed(b, n, got, err)
			}
			testenv.ReportList(b, mine, raw, cliRSS)
			b.ReportMetric(retained, "retained-MB")
		})
	}
}

// liveHeapMB returns the heap still reachable after a collection, in MB: what
// a listing leaves behind (a cache holding on to its responses) shows as
// growth from before the listing to after it.
func liveHeapMB() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}

func wantListed(b *testing.B, n, got int, err error) {
	b.Helper()
	if err != nil || got != n {
		b.Fatalf("listed %d records, want %d (%v)", got, n, err)
	}
}

// listDriver lists every ledger under prefix through the driver and
// returns how many records and failures it saw.
func listDriver(ctx context.Context, d *dynamodb.Driver, prefix string) (int, error) {
	recs, failed, err := testenv.ListAll(ctx, d, driver.ListOptions{Kind: model.Ledger, Prefix: prefix, PageSize: benchPageSize})
	return recs + failed, err
}

// listRaw makes the calls List makes, with the SDK alone: it returns how
// many records it read.
func listRaw(ctx context.Context, c *awsdynamodb.Client, table, prefix string, parallel int) (int, error) {
	var start map[string]types.AttributeValue
	total := 0
	for {
		out, err := c.Query(ctx, &awsdynamodb.QueryInput{
			TableName:                aws.String(table),
			IndexName:                aws.String(dynamodb.IndexName),
			KeyConditionExpression:   aws.String("#k = :k AND begins_with(#p, :p)"),
			ExpressionAttributeNames: map[string]string{"#k": "kind", "#p": "pk"},
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":k": s(string(model.Ledger)), ":p": s(prefix),
			},
			ExclusiveStartKey: start,
			Limit:             aws.Int32(benchPageSize + 1),
		})
		if err != nil {
			return total, err
		}
		items := out.Items
		more := len(items) > benchPageSize
		items = items[:min(len(items), benchPageSize)]
		var keys []map[string]types.AttributeValue
		for _, it := range items {
			for _, sk := range []string{"meta", "head", "index", "config", "status"} {
				keys = append(keys, map[string]types.AttributeValue{"pk": it["pk"], "sk": s(sk)})
			}
		}
		got, err := batchGetCount(ctx, c, table, keys, parallel)
		if err != nil {
			return total, err
		}
		if got != int64(5*len(items)) {
			return total, fmt.Errorf("raw: read %d items for %d records", got, len(items))
		}
		total += len(items)
		if !more {
			return total, nil
		}
		last := items[len(items)-1]
		start = map[string]types.AttributeValue{"kind": last["kind"], "pk": last["pk"], "sk": s("meta")}
	}
}

// BenchmarkWatch seeds 10,000 ledgers and, with one writer pushing 10 head
// changes per second to random ones, runs a watcher of the prefix for
// NS_BENCH_WATCH_FOR: first the driver's stream watch, then the portable
// polling watch (1 s interval) over the same driver with its feed hidden,
// which is what a table without a stream gets. It reports the latency from
// the start of each write to the event that reports it (p50/p99, in ms) for
// both, and the requests per poll of the polling watch.
func BenchmarkWatch(b *testing.B) {
	d, ctx := scaleDriver(b)
	const n = 10_000
	prefix := "watch-" + testenv.RandomHex(2) + "/"
	seed(b, d, prefix, n)
	cfg := testConfig(b)
	cfg.Table = d.Table()
	ct := newCountingTransport(http.DefaultTransport.(*http.Transport).Clone())
	cfg.HTTPClient = &http.Client{Transport: ct, Timeout: time.Minute}
	counted, err := dynamodb.Open(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = counted.Close() })
	load := testenv.WatchLoad{Writer: d, N: n, ID: func(r int) model.ID { return benchID(prefix, r) },
		For: testenv.WatchFor(b), T: map[int]int64{}, Wait: time.Minute, Reported: 0.9}
	for b.Loop() {
		stream := testenv.WatchLatency(b, load, func(ctx context.Context) (<-chan driver.Event, error) {
			return d.Watch(ctx, driver.WatchOptions{Prefix: prefix})
		})
		nf := &noFeed{Driver: counted, ct: ct}
		ct.take()
		poll := testenv.WatchLatency(b, load, func(ctx context.Context) (<-chan driver.Event, error) {
			return nameservice.New(nf).Watch(ctx, nameservice.WatchOptions{Prefix: prefix, Interval: time.Second})
		})
		polls, reqs := nf.complete()
		b.ReportMetric(stream[0], "stream-p50-ms")
		b.ReportMetric(stream[1], "stream-p99-ms")
		b.ReportMetric(poll[0], "poll-p50-ms")
		b.ReportMetric(poll[1], "poll-p99-ms")
		b.ReportMetric(float64(reqs)/float64(polls), "requests/poll")
		b.ReportMetric(float64(polls), "polls")
		b.ReportMetric(float64(reqs)/float64(polls)/float64(n/100), "requests/page")
	}
	b.ReportMetric(0, "ns/op")
}

// noFeed hides the driver's Watch, so that NameService.Watch polls, and
// notes the requests sent so far at the start of each listing (first page).
type noFeed struct {
	driver.Driver
	ct     *countingTransport
	mu     sync.Mutex
	starts []int
}

func (f *noFeed) List(ctx context.Context, opts driver.ListOptions) (*driver.Page, error) {
	if opts.PageToken == "" {
		f.mu.Lock()
		f.starts = append(f.starts, f.ct.total())
		f.mu.Unlock()
	}
	return f.Driver.List(ctx, opts)
}

// complete returns the listings that ran to the end (the initial snapshot
// and the polls, not the one the end of the watch cut short) and the
// requests they sent.
func (f *noFeed) complete() (polls int, requests int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(f.starts) - 1
	return n, f.starts[n] - f.starts[0]
}

// scaleDriver returns a driver over a new table, which the benchmark
// deletes at its end; edits change the CreateTable request first.
func scaleDriver(b *testing.B, edits ...func(*awsdynamodb.CreateTableInput)) (*dynamodb.Driver, context.Context) {
	ctx := context.Background()
	cfg := testConfig(b)
	cfg.Table = "ns-bench-" + testenv.RandomHex(4)
	cfg.Timeout = time.Minute // a loaded DynamoDB Local answers a 25-item write in seconds
	d, err := dynamodb.Open(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	if len(edits) > 0 {
		in := dynamodb.CreateTableInput(cfg.Table)
		for _, e := range edits {
			e(in)
		}
		if _, err := d.Client().CreateTable(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
	if err := d.Provision(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_, _ = d.Client().DeleteTable(context.Background(), deleteTableInput(cfg.Table))
		_ = d.Close()
	})
	return d, ctx
}

func benchID(prefix string, i int) model.ID {
	return model.ID{Name: fmt.Sprintf("%s%06d", prefix, i), Branch: "main"}
}

// seed writes n ledgers under prefix with BatchWriteItem (25 items a call,
// 8 calls at once), then waits until the GSI lists them all.
func seed(b *testing.B, d *dynamodb.Driver, prefix string, n int) {
	b.Helper()
	ctx := context.Background()
	start := time.Now()
	putRecords(b, d, func(yield func(*model.Record) bool) {
		for i := range n {
			if !yield(model.NewLedger(benchID(prefix, i), 1)) {
				return
			}
		}
	}, nil)
	for deadline := time.Now().Add(2 * time.Minute); ; {
		got, err := listRaw(ctx, d.Client(), d.Table(), prefix, dynamodb.DefaultListParallel)
		if err == nil && got == n {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("seed: the GSI lists %d of %d records (%v)", got, n, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	b.Logf("seeded %d ledgers in %s", n, time.Since(start).Round(time.Millisecond))
}
