package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"nameservice.dev/nameservice/drivers/dynamodb"
	"nameservice.dev/nameservice/internal/testing/testenv"
)

// runMainEnv makes the test binary act as ns-migrate, so the benchmark can
// measure the peak RSS of a migration in a process of its own.
const runMainEnv = "NS_MIGRATE_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
	}
	os.Exit(m.Run())
}

// benchParallel is the parallelism of both the migration and the raw loop.
const benchParallel = 4

// BenchmarkMigrateToDynamoDB copies generated records from a directory into
// a new DynamoDB Local table with ns-migrate (in a child process, to measure
// its peak RSS), next to a raw loop issuing one TransactWriteItems of five
// items per record at the same parallelism. 1,000 and 10,000 records show
// whether memory stays flat. Run it with
//
//	go test -run '^$' -bench MigrateToDynamoDB -benchtime 1x ./cmd/ns-migrate
func BenchmarkMigrateToDynamoDB(b *testing.B) {
	endpoint := testenv.DynamoDBEndpoint(b)
	for _, n := range []int{1000, 10000} {
		dir := generate(b, n)
		b.Run(fmt.Sprintf("records=%d/ns-migrate", n), func(b *testing.B) {
			for range b.N {
				table := dynamoURL(b, endpoint)
				el, rss := migrateChild(b, "--from", fileURL(dir), "--to", table, "--create-table", "--parallel", strconv.Itoa(benchParallel))
				b.ReportMetric(float64(n)/el.Seconds(), "records/s")
				b.ReportMetric(float64(rss)/1024, "peak-RSS-MB")
			}
		})
		b.Run(fmt.Sprintf("records=%d/raw-TransactWriteItems", n), func(b *testing.B) {
			for range b.N {
				el := rawLoop(b, endpoint, n)
				b.ReportMetric(float64(n)/el.Seconds(), "records/s")
			}
		})
	}
}

// generate writes n ledgers, with heads, indexes and configs, into a new
// directory nameservice.
func generate(b *testing.B, n int) string { return generateTB(b, n) }

func generateTB(b testing.TB, n int) string {
	b.Helper()
	dir := b.TempDir()
	ns := open(b, fileURL(dir))
	ids := make(chan int)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range ids {
				r := newLedger(b, fmt.Sprintf("bench/db%05d:main", i))
				r.Head, r.Index = ptr(ref(int64(i+10), "c")), ptr(ref(int64(i+5), "i"))
				r.Config = ptr(config(1, "default"))
				if err := ns.Import(context.Background(), r); err != nil {
					b.Error(err)
				}
			}
		})
	}
	for i := range n {
		ids <- i
	}
	close(ids)
	wg.Wait()
	return dir
}

// migrateChild runs ns-migrate in a child process and returns its elapsed
// time and peak RSS in KiB.
func migrateChild(b *testing.B, args ...string) (time.Duration, int64) {
	b.Helper()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	el := time.Since(start)
	if err != nil {
		b.Fatalf("ns-migrate: %v\n%s", err, out)
	}
	b.Logf("%s", out)
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		b.Fatal("no rusage for the child")
	}
	return el, ru.Maxrss // KiB on Linux
}

// rawLoop creates a table and writes n records of five items each, one
// TransactWriteItems per record, benchParallel at a time.
func rawLoop(b *testing.B, endpoint string, n int) time.Duration {
	b.Helper()
	ctx := context.Background()
	table := fmt.Sprintf("raw-%d-%d", time.Now().UnixNano()%1e9, storeSeq.Add(1))
	d, err := dynamodb.Open(ctx, dynamodb.Config{Table: table, Endpoint: endpoint})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	if err := d.Provision(ctx); err != nil {
		b.Fatal(err)
	}
	client, err := dynamodb.NewClient(ctx, dynamodb.Config{Table: table, Endpoint: endpoint})
	if err != nil {
		b.Fatal(err)
	}
	ids := make(chan int)
	var wg sync.WaitGroup
	start := time.Now()
	for range benchParallel {
		wg.Go(func() {
			for i := range ids {
				if _, err := client.TransactWriteItems(ctx, rawRecord(table, i)); err != nil {
					b.Error(err)
				}
			}
		})
	}
	for i := range n {
		ids <- i
	}
	close(ids)
	wg.Wait()
	return time.Since(start)
}

// rawRecord is a create of one record: its five items, each put only if
// absent, much as the driver's Create writes them.
func rawRecord(table string, i int) *awsddb.TransactWriteItemsInput {
	pk := fmt.Sprintf("bench/db%05d:main", i)
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	num := func(v int) types.AttributeValue { return &types.AttributeValueMemberN{Value: strconv.Itoa(v)} }
	items := []map[string]types.AttributeValue{
		{"sk": s("meta"), "kind": s("ledger"), "name": s(pk[:len(pk)-5]), "branch": s("main"), "retracted": &types.AttributeValueMemberBOOL{}},
		{"sk": s("head"), "commit_t": num(i + 10), "commit_address": s("fluree:file://commits/c")},
		{"sk": s("index"), "index_t": num(i + 5), "index_address": s("fluree:file://commits/i")},
		{"sk": s("status"), "status_v": num(1), "status": s("ready")},
		{"sk": s("config"), "config_v": num(1), "config_meta": s(`{"tag":"default"}`)},
	}
	in := &awsddb.TransactWriteItemsInput{}
	for _, it := range items {
		it["pk"], it["schema"] = s(pk), num(2)
		in.TransactItems = append(in.TransactItems, types.TransactWriteItem{Put: &types.Put{
			TableName: aws.String(table), Item: it, ConditionExpression: aws.String("attribute_not_exists(pk)"),
		}})
	}
	return in
}
