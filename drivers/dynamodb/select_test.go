package dynamodb_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/conformance"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/dynamodb"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/model"
)

// ownTable creates a table of the test's own, with the schema's optional
// indexes when indexed, and deletes it at the end. Its clients' requests
// pass through the returned recorder.
func ownTable(t *testing.T, indexed bool) (dynamodb.Config, *recorder) {
	t.Helper()
	cfg := testConfig(t)
	cfg.Table = "ns-test-sel-" + testenv.RandomHex(4)
	rec := &recorder{countingTransport: countingTransport{base: http.DefaultTransport.(*http.Transport).Clone(), n: map[string]int{}, failed: map[string]int{}}}
	cfg.HTTPClient = &http.Client{Transport: rec, Timeout: 30 * time.Second}
	d, err := dynamodb.Open(context.Background(), cfg)
	must(t, err)
	defer d.Close()
	ctx := context.Background()
	if indexed {
		_, err = d.ProvisionIndexes(ctx)
	} else {
		err = d.Provision(ctx)
	}
	must(t, err)
	t.Cleanup(func() { _, _ = d.Client().DeleteTable(context.Background(), deleteTableInput(cfg.Table)) })
	rec.take()
	return cfg, rec
}

// recorder counts requests as countingTransport does, and keeps the bodies
// of the Query and Scan requests, to tell which index each read.
type recorder struct {
	countingTransport
	mu     sync.Mutex
	bodies []string
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if op := req.Header.Get("X-Amz-Target"); strings.HasSuffix(op, ".Query") || strings.HasSuffix(op, ".Scan") {
		b, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(b))
		r.mu.Lock()
		r.bodies = append(r.bodies, string(b))
		r.mu.Unlock()
	}
	return r.countingTransport.RoundTrip(req)
}

// indexesRead returns the indexes the recorded Query requests read ("" for
// the table) and forgets them.
func (r *recorder) indexesRead() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, b := range r.bodies {
		ix := ""
		for _, name := range []string{dynamodb.IndexName, dynamodb.StateIndexName, dynamodb.SourceTypeIndexName} {
			if strings.Contains(b, `"IndexName":"`+name+`"`) {
				ix = name
			}
		}
		out = append(out, ix)
	}
	r.bodies = nil
	return out
}

// TestConformanceWithIndexes runs the selection cases on a table with the
// optional indexes, which List uses (the shared table of TestConformance
// has none, and lists by scanning).
func TestConformanceWithIndexes(t *testing.T) {
	cfg, _ := ownTable(t, true)
	conformance.RunGroups(t, conformance.HarnessFunc(func(ctx context.Context, t *testing.T) (conformance.Opener, error) {
		return func(ctx context.Context) (driver.Driver, error) { return dynamodb.Open(ctx, cfg) }, nil
	}), "Select", "Heads")
}

// TestHeadsIsOneQuery: a ledger's heads cost one Query, counted at the
// HTTP client; the error path of a graph source one more (the Get that
// tells it from a damaged ledger).
func TestHeadsIsOneQuery(t *testing.T) {
	ns, ct := countingNS(t)
	ctx := context.Background()
	id := "heads" + testenv.RandomHex(4) + "/db"
	must(t, ns.Init(ctx, id))
	_, err := ns.PublishCommit(ctx, id, 7, "c7")
	must(t, err)
	_, err = ns.PublishIndex(ctx, id, 5, "i5")
	must(t, err)
	ct.take()
	h, err := ns.Heads(ctx, id)
	must(t, err)
	wantRequests(t, ct, "heads", map[string]int{"Query": 1})
	if !h.Head.Equal(nameservice.RefValue("c7", 7)) || !h.Index.Equal(nameservice.RefValue("i5", 5)) {
		t.Fatalf("heads = %v, %v", h.Head, h.Index)
	}
	gs := "heads" + testenv.RandomHex(4) + "/gs"
	must(t, ns.PublishGraphSource(ctx, gs, "db:Bm25Index", nil, nil))
	ct.take()
	if _, err := ns.Heads(ctx, gs); !errors.Is(err, nameservice.ErrWrongKind) {
		t.Fatalf("heads of a graph source: %v", err)
	}
	wantRequests(t, ct, "heads of a graph source", map[string]int{"Query": 2})
}

// TestListBySelectionReads checks which requests a listing by state and
// by source type sends: with the indexes, a Query of the selection's index
// and the BatchGetItem of the records; without them, a parallel Scan (by
// state) or gsi1-kind's graph sources (by source type). The table is
// described once per client, and not for a plain listing.
func TestListBySelectionReads(t *testing.T) {
	for _, indexed := range []bool{true, false} {
		t.Run(fmt.Sprintf("indexed=%v", indexed), func(t *testing.T) {
			cfg, rec := ownTable(t, indexed)
			d := openWith(t, cfg)
			ns := nameservice.New(d)
			ctx := context.Background()
			for i := range 6 {
				must(t, ns.Init(ctx, fmt.Sprintf("db%d", i)))
			}
			must(t, ns.PublishGraphSource(ctx, "gs1", "db:Bm25Index", nil, nil))
			must(t, ns.PublishGraphSource(ctx, "gs2", "db:HnswIndex", nil, nil))
			for _, id := range []string{"db1", "db4"} {
				_, err := ns.PushStatus(ctx, id, nameservice.StatusValue(1, "ready", nil), nameservice.StatusValue(2, "indexing", nil))
				must(t, err)
			}
			rec.take()
			rec.indexesRead()
			waitListed(t, ns, nameservice.ListOptions{}, "db0:main", "db1:main", "db2:main", "db3:main", "db4:main", "db5:main", "gs1:main", "gs2:main")
			if got := rec.take(); got["DescribeTable"] != 0 {
				t.Fatalf("a plain listing described the table: %v", got)
			}
			rec.indexesRead()

			waitListed(t, ns, nameservice.ListOptions{State: "indexing"}, "db1:main", "db4:main")
			got, ix := rec.take(), rec.indexesRead()
			if indexed {
				if got["Scan"] != 0 || !slices.Contains(ix, dynamodb.StateIndexName) {
					t.Fatalf("by state with the index: requests %v on indexes %q", got, ix)
				}
			} else if got["Scan"] != dynamodb.DefaultListParallel || slices.Contains(ix, dynamodb.StateIndexName) {
				t.Fatalf("by state without the index: requests %v on indexes %q; want %d Scan segments", got, ix, dynamodb.DefaultListParallel)
			}
			if got["DescribeTable"] != 1 {
				t.Fatalf("by state: DescribeTable %d times, want once", got["DescribeTable"])
			}

			waitListed(t, ns, nameservice.ListOptions{SourceType: "db:HnswIndex"}, "gs2:main")
			got, ix = rec.take(), rec.indexesRead()
			want := dynamodb.IndexName
			if indexed {
				want = dynamodb.SourceTypeIndexName
			}
			if got["DescribeTable"] != 0 || !slices.Contains(ix, want) || slices.Contains(ix, "") {
				t.Fatalf("by source type: requests %v on indexes %q, want %s and no new description", got, ix, want)
			}
		})
	}
}

// waitListed lists with opts until it lists exactly want (an index is
// eventually consistent), and fails at once on a record not in opts.State.
func waitListed(t *testing.T, ns *nameservice.NameService, opts nameservice.ListOptions, want ...string) {
	t.Helper()
	var got []string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		got = nil
		for r, err := range ns.List(context.Background(), opts) {
			must(t, err)
			if opts.State != "" && r.Status.State() != opts.State {
				t.Fatalf("list %+v holds %s in state %q", opts, r.ID, r.Status.State())
			}
			got = append(got, r.ID.String())
		}
		if slices.Equal(got, want) || time.Now().After(deadline) {
			break
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("list %+v = %q, want %q", opts, got, want)
	}
}

// statusStates returns, for every status item of the table, its status and
// its status_state ("<absent>" when it has none), read raw.
func statusStates(t *testing.T, d *dynamodb.Driver) map[string][2]string {
	t.Helper()
	out := map[string][2]string{}
	in := &awsdynamodb.ScanInput{TableName: aws.String(d.Table()), ConsistentRead: aws.Bool(true),
		FilterExpression:          aws.String("sk = :s"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":s": s("status")}}
	for {
		page, err := d.Client().Scan(context.Background(), in)
		must(t, err)
		for _, it := range page.Items {
			out[attr(it, "pk")] = [2]string{attr(it, "status"), attr(it, "status_state")}
		}
		if len(page.LastEvaluatedKey) == 0 {
			return out
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// wantStatesInStep fails unless every status item's status_state is its
// status.
func wantStatesInStep(t *testing.T, d *dynamodb.Driver, n int) {
	t.Helper()
	states := statusStates(t, d)
	if len(states) != n {
		t.Fatalf("%d status items, want %d", len(states), n)
	}
	for pk, st := range states {
		if st[0] != st[1] {
			t.Fatalf("%s: status %s, status_state %s", pk, st[0], st[1])
		}
	}
}

var raceStates = []string{"ready", "indexing", "error", "reindexing"}

// wantListedByState checks that a listing by each state under prefix
// lists exactly the records of ids in that state.
func wantListedByState(t *testing.T, ns *nameservice.NameService, prefix string, ids []string) {
	t.Helper()
	for _, st := range raceStates {
		var want []string
		for _, id := range ids {
			cur, err := ns.StatusOf(context.Background(), id)
			must(t, err)
			if cur.State() == st {
				pid, err := nameservice.ParseID(id)
				must(t, err)
				want = append(want, pid.String())
			}
		}
		waitListed(t, ns, nameservice.ListOptions{Prefix: prefix, State: st}, want...)
	}
}

// pushRandomStates pushes, from one client, rounds status changes to
// random records of ids, each a compare-and-set from the status it read
// (retried on conflict), and returns how many it applied.
func pushRandomStates(ctx context.Context, t *testing.T, ns *nameservice.NameService, ids []string, rounds int, more func() bool) int {
	applied := 0
	for i := 0; i < rounds || more(); i++ {
		id := ids[rand.IntN(len(ids))]
		for {
			cur, err := ns.StatusOf(ctx, id)
			if err != nil {
				t.Error(err)
				return applied
			}
			next := nameservice.StatusValue(cur.V+1, raceStates[rand.IntN(len(raceStates))], nil)
			out, err := ns.PushStatus(ctx, id, cur, next)
			if err != nil {
				t.Error(err)
				return applied
			}
			if out.Applied {
				applied++
				break
			}
		}
	}
	return applied
}

// TestStatusStateUnderConcurrentPushes: 16 writers push status changes to
// the same few records at once; afterwards every status item's
// status_state equals its status, and the state index lists each record
// under its state alone. Each writer pushes 8 changes, 25 with -long (the
// environment variable conformance.LongEnv): with four writers to a
// record, most pushes meet a conflict, so a status_state written apart
// from its status goes out of step within the first few dozen.
func TestStatusStateUnderConcurrentPushes(t *testing.T) {
	rounds := 8
	if os.Getenv(conformance.LongEnv) != "" {
		rounds = 25
	}
	cfg, _ := ownTable(t, true)
	ctx := context.Background()
	setup := nameservice.New(openWith(t, cfg))
	var ids []string
	for i := range 4 {
		id := fmt.Sprintf("race/db%d", i)
		must(t, setup.Init(ctx, id))
		ids = append(ids, id)
	}
	var g errgroup.Group
	var applied atomic.Int64
	for range 16 {
		ns := nameservice.New(openWith(t, cfg))
		g.Go(func() error {
			applied.Add(int64(pushRandomStates(ctx, t, ns, ids, rounds, func() bool { return false })))
			return nil
		})
	}
	must(t, g.Wait())
	if applied.Load() != int64(16*rounds) {
		t.Fatalf("%d pushes applied, want %d", applied.Load(), 16*rounds)
	}
	wantStatesInStep(t, openWith(t, cfg), len(ids))
	wantListedByState(t, setup, "race/", ids)
}

// seedAsFluree writes n ledgers under prefix as Fluree does: with no
// status_state on their status items. Every third is given a stale
// status_state instead, as a Fluree status push leaves one this driver
// wrote.
func seedAsFluree(t *testing.T, d *dynamodb.Driver, prefix string, n int) []string {
	t.Helper()
	var ids []string
	putRecords(t, d, func(yield func(*model.Record) bool) {
		for i := range n {
			rec := model.NewLedger(model.ID{Name: fmt.Sprintf("%s%03d", prefix, i), Branch: "main"}, 1)
			ids = append(ids, rec.ID.String())
			if !yield(rec) {
				return
			}
		}
	}, func(i int, it map[string]types.AttributeValue) {
		if attr(it, "sk") == "status" {
			delete(it, "status_state")
			if i%3 == 0 {
				it["status_state"] = s("indexing")
			}
		}
	})
	return ids
}

// TestUpgradeWhileWriting: on a table without the optional indexes whose
// records Fluree wrote (no status_state, or a stale one), `ns table
// upgrade`'s UpgradeTable runs while 16 writers push status changes. When
// both are done every status item's status_state equals its status, the
// indexes are ACTIVE, and listings by state through them are exact. A
// second run finds nothing to back-fill.
func TestUpgradeWhileWriting(t *testing.T) {
	cfg, _ := ownTable(t, false)
	// A bound, so that an index the server never finishes fails the test
	// instead of holding the package until go test's timeout: DynamoDB
	// Local once failed the writes beside its UpdateTable (HTTP 500, "no
	// column named indexKey_1") and left the index building.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	d := openWith(t, cfg)
	ids := seedAsFluree(t, d, "up/db", 120)
	var upgraded atomic.Bool
	var g errgroup.Group
	started := make(chan struct{}, 16)
	for range 16 {
		ns := nameservice.New(openWith(t, cfg))
		g.Go(func() error {
			pushRandomStates(ctx, t, ns, ids, 3, func() bool { return false })
			started <- struct{}{}
			pushRandomStates(ctx, t, ns, ids, 5, func() bool { return !upgraded.Load() })
			return nil
		})
	}
	for range 16 {
		<-started // every writer is writing
	}
	up, err := d.UpgradeTable(ctx)
	upgraded.Store(true)
	must(t, err)
	must(t, g.Wait())
	if !slices.Equal(up.Added, []string{dynamodb.StateIndexName, dynamodb.SourceTypeIndexName}) || up.Backfilled == 0 {
		t.Fatalf("upgrade = %+v, want both indexes added and items back-filled", up)
	}
	wantStatesInStep(t, d, len(ids))
	again, err := d.UpgradeTable(ctx)
	must(t, err)
	if len(again.Added) != 0 || again.Backfilled != 0 {
		t.Fatalf("second upgrade = %+v, want nothing to do", again)
	}
	wantListedByState(t, nameservice.New(openWith(t, cfg)), "up/", ids)
}

// TestFlureeStatusPushesAndTheIndex: Fluree pushes a status without
// status_state. A listing by state through the index never lists the
// record under the state it left (the record read says otherwise), misses
// it under its new state until `ns table upgrade` runs again, and then
// finds it.
func TestFlureeStatusPushesAndTheIndex(t *testing.T) {
	cfg, _ := ownTable(t, true)
	ctx := context.Background()
	d := openWith(t, cfg)
	ns := nameservice.New(d)
	must(t, ns.Init(ctx, "fl/a"))
	must(t, ns.Init(ctx, "fl/b"))
	waitListed(t, ns, nameservice.ListOptions{State: "ready"}, "fl/a:main", "fl/b:main")
	// Fluree's push_status: SET status, status_v; status_state untouched.
	_, err := d.Client().UpdateItem(ctx, &awsdynamodb.UpdateItemInput{TableName: aws.String(cfg.Table),
		Key:                       map[string]types.AttributeValue{"pk": s("fl/a:main"), "sk": s("status")},
		UpdateExpression:          aws.String("SET #st = :st, status_v = :v"),
		ExpressionAttributeNames:  map[string]string{"#st": "status"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":st": s("indexing"), ":v": n(2)}})
	must(t, err)
	for range 5 { // the index still says ready: the record read does not
		waitListed(t, ns, nameservice.ListOptions{State: "ready"}, "fl/b:main")
	}
	waitListed(t, ns, nameservice.ListOptions{State: "indexing"})
	up, err := d.UpgradeTable(ctx)
	must(t, err)
	if up.Backfilled != 1 || len(up.Added) != 0 {
		t.Fatalf("upgrade = %+v, want the one item back-filled", up)
	}
	waitListed(t, ns, nameservice.ListOptions{State: "indexing"}, "fl/a:main")
}

// TestWatchOfHeadsReadsOnlyTheStream: a stream watch of heads alone reads
// nothing but the stream while index, status and config change, and
// reports only the head.
func TestWatchOfHeadsReadsOnlyTheStream(t *testing.T) {
	cfg := testConfig(t)
	ct := &countingTransport{base: http.DefaultTransport.(*http.Transport).Clone(), n: map[string]int{}, failed: map[string]int{}}
	cfg.HTTPClient = &http.Client{Transport: ct, Timeout: 10 * time.Second}
	w := openWith(t, cfg)
	writer := openDriver(t)
	id := newWatchedLedger(t, writer)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := w.Watch(ctx, driver.WatchOptions{ID: id, Concerns: []model.Concern{model.Head}})
	must(t, err)
	ct.take()
	ns := nameservice.New(writer)
	_, err = ns.PublishIndex(ctx, id.String(), 1, "i1")
	must(t, err)
	_, err = ns.PushStatus(ctx, id.String(), nameservice.StatusValue(1, "ready", nil), nameservice.StatusValue(2, "indexing", nil))
	must(t, err)
	_, err = ns.PushConfig(ctx, id.String(), nameservice.Value{}, nameservice.Value{V: 1, Payload: nameservice.Object{"k": 1}})
	must(t, err)
	pushHead(t, writer, id, 1, 1)
	if ev := nextEvent(t, ch); ev.Concern != model.Head || ev.New.V != 1 {
		t.Fatalf("first event %+v, want the head at 1", ev)
	}
	for op, k := range ct.take() {
		if k > 0 && op != "GetRecords" && op != "GetShardIterator" && op != "DescribeStream" {
			t.Fatalf("the watch sent %d %s; it reads only the stream", k, op)
		}
	}
}
