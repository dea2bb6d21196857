package dynamodb_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/internal/testing/testenv"
)

// putCommitRows writes rows t = from..to of pk's commit index as Fluree's
// put_commit_index_item does (fluree-db-storage-aws/src/dynamodb/mod.rs),
// 25 to a BatchWriteItem, 8 calls at once, with ttl written at writtenAt.
func putCommitRows(t *testing.T, f fluree, pk string, from, to int64, writtenAt time.Time) {
	t.Helper()
	ctx := context.Background()
	var reqs []types.WriteRequest
	for i := from; i <= to; i++ {
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: map[string]types.AttributeValue{
			"pk": s(pk), "sk": s(fmt.Sprintf("commit#%020d", i)), "commit_cid": s(testenv.CID(fmt.Sprint(pk, i))),
			"commit_t": n(i), "ttl": n(writtenAt.Unix() + 30*24*60*60),
		}}})
	}
	var (
		wg   sync.WaitGroup
		sem  = make(chan struct{}, 32)
		mu   sync.Mutex
		errs []error
	)
	for batch := range slices.Chunk(reqs, 25) {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			for len(batch) > 0 {
				out, err := f.c.BatchWriteItem(ctx, &awsdynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{f.table: batch}})
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				batch = out.UnprocessedItems[f.table]
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatal(errs[0])
	}
}

// partitionSize counts the rows of partition pk.
func partitionSize(t *testing.T, f fluree, pk string) int {
	t.Helper()
	in := &awsdynamodb.QueryInput{TableName: aws.String(f.table), KeyConditionExpression: aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s(pk)}, Select: types.SelectCount, ConsistentRead: aws.Bool(true)}
	total := 0
	for {
		out, err := f.c.Query(context.Background(), in)
		must(t, err)
		total += int(out.Count)
		if len(out.LastEvaluatedKey) == 0 {
			return total
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// TestCommitIndexRows puts 10,000 commit-index rows, as Fluree writes them,
// in a ledger's partition: a lookup still costs one Query (as does Fluree's
// own, which reads the head beside them), a listing the same GSI Query and
// BatchGetItem as without them, and a purge leaves the partition empty,
// deleting the rows with BatchWriteItem (25 a call) and the record with one
// transaction.
func TestCommitIndexRows(t *testing.T) {
	ns, ct := countingNS(t)
	fl := newFluree(t)
	ctx := context.Background()
	prefix := "rows" + testenv.RandomHex(3) + "/"
	id := prefix + "db:main"
	const rows = 10_000
	must(t, ns.Init(ctx, id))
	_, err := ns.PublishCommit(ctx, id, rows, testenv.CID("head"))
	must(t, err)
	putCommitRows(t, fl, id, 1, rows, time.Now())
	ct.take()
	ct.takeRetries()

	rec, err := ns.Lookup(ctx, id)
	must(t, err)
	if rec.Head.V != rows {
		t.Fatalf("head %v, want t %d", *rec.Head, rows)
	}
	wantRequests(t, ct, fmt.Sprintf("lookup beside %d commit rows", rows), map[string]int{"Query": 1 + ct.takeRetries()["Query"]})
	if fr, err := fl.lookup(ctx, id); err != nil || fr.head != (flRef{testenv.CID("head"), rows}) {
		t.Fatalf("Fluree's lookup: %+v, %v", fr.head, err)
	}
	for _, err := range ns.List(ctx, nameservice.ListOptions{Prefix: prefix, Kind: nameservice.Ledger}) {
		must(t, err)
	}
	retries := ct.takeRetries()
	wantRequests(t, ct, "list beside the rows", map[string]int{"Query": 1 + retries["Query"], "BatchGetItem": 1 + retries["BatchGetItem"]})

	must(t, ns.Purge(ctx, id))
	got, retries := ct.take(), ct.takeRetries()
	batches := (rows + 24) / 25
	if got["BatchWriteItem"] != batches+retries["BatchWriteItem"] || got["TransactWriteItems"] != 1+retries["TransactWriteItems"] || got["Query"] < 1 {
		t.Errorf("purge: requests %v (retried %v), want ⌈%d/25⌉ = %d BatchWriteItem, 1 TransactWriteItems and the key Query's pages", got, retries, rows, batches)
	}
	t.Logf("purge of a ledger with %d commit rows: %v", rows, got)
	if n := partitionSize(t, fl, id); n != 0 {
		t.Errorf("purge left %d rows in the partition", n)
	}
}

// TestCollectRows: rows written into a partition after its record was
// purged (Fluree publishing to a ledger while it is purged) are removed by
// Collect, those younger than OlderThan kept, and the rows of a live record
// never touched; a purge of the gone ID removes such rows too.
func TestCollectRows(t *testing.T) {
	d := openDriver(t)
	ns := nameservice.New(d)
	fl := newFluree(t)
	ctx := context.Background()
	prefix := "collectrows" + testenv.RandomHex(3) + "/"
	gone, live := prefix+"gone:main", prefix+"live:main"
	must(t, ns.Init(ctx, gone))
	must(t, ns.Init(ctx, live))
	must(t, ns.Purge(ctx, gone))
	old := time.Now().Add(-48 * time.Hour)
	putCommitRows(t, fl, gone, 1, 30, old)
	putCommitRows(t, fl, gone, 31, 40, time.Now())
	putCommitRows(t, fl, live, 1, 5, old)

	var reported []nameservice.Collected
	st, err := ns.Collect(ctx, nameservice.CollectOptions{Prefix: prefix, OlderThan: 24 * time.Hour, DryRun: true,
		Report: func(c nameservice.Collected) { reported = append(reported, c) }})
	must(t, err)
	if st.Removed != 30 || st.Kept != 10 || partitionSize(t, fl, gone) != 40 {
		t.Fatalf("dry run: %+v, %d rows left, want 30 to remove, 10 kept, all 40 left", st, partitionSize(t, fl, gone))
	}
	if c := reported[0]; c.ID != gone || c.Object == "" || c.Reason == "" {
		t.Errorf("reported %+v, want the row named with its record and a reason", c)
	}
	st, err = ns.Collect(ctx, nameservice.CollectOptions{Prefix: prefix, OlderThan: 24 * time.Hour})
	must(t, err)
	if st.Removed != 30 || st.Kept != 10 || partitionSize(t, fl, gone) != 10 {
		t.Fatalf("collect older than 24h: %+v, %d rows left, want 30 removed, 10 kept and left", st, partitionSize(t, fl, gone))
	}
	st, err = ns.Collect(ctx, nameservice.CollectOptions{Prefix: prefix})
	must(t, err)
	if st.Removed != 10 || partitionSize(t, fl, gone) != 0 {
		t.Fatalf("collect: %+v, %d rows left, want the last 10 removed", st, partitionSize(t, fl, gone))
	}
	putCommitRows(t, fl, gone, 41, 43, time.Now())
	if err := ns.Purge(ctx, gone); !errors.Is(err, nameservice.ErrNotFound) || partitionSize(t, fl, gone) != 0 {
		t.Errorf("purge of the purged ID beside 3 rows: %v, %d rows left, want ErrNotFound and none", err, partitionSize(t, fl, gone))
	}
	if n := partitionSize(t, fl, live); n != 5+5 {
		t.Errorf("the live record's partition holds %d rows, want its 5 items and 5 commit rows", n)
	}
}

// afterRequest runs hook once, when armed, after a request of operation op
// (TransactWriteItems, UpdateItem, ...) answered: the writes it makes land
// between that request and what the client does next. With breakBody, that
// answer's body then breaks off halfway, with the error a connection
// closed in the middle of it gives.
type afterRequest struct {
	base      http.RoundTripper
	op        string
	armed     atomic.Bool
	hook      func()
	breakBody bool
}

func (a *afterRequest) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := a.base.RoundTrip(r)
	if !strings.HasSuffix(r.Header.Get("X-Amz-Target"), "."+a.op) || !a.armed.CompareAndSwap(true, false) {
		return resp, err
	}
	a.hook()
	if err != nil || !a.breakBody {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	broken := &net.OpError{Op: "read", Net: "tcp", Err: net.ErrClosed}
	resp.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body[:len(body)/2]), iotest.ErrReader(broken)))
	return resp, nil
}

// TestPurgeSweepsLateRows: commit rows whose PutItem lands after the
// purge's transaction (Fluree's, for a head it published just before) are
// removed by the purge too; so are rows left in a partition without a
// record, by a purge of that ID (then ErrNotFound); a live record's rows are
// never touched.
func TestPurgeSweepsLateRows(t *testing.T) {
	fl := newFluree(t)
	cfg := testConfig(t)
	late := &afterRequest{base: http.DefaultTransport.(*http.Transport).Clone(), op: "TransactWriteItems"}
	cfg.HTTPClient = &http.Client{Transport: late, Timeout: time.Minute}
	ns := nameservice.New(openWith(t, cfg))
	ctx := context.Background()
	prefix := "laterows" + testenv.RandomHex(3) + "/"
	gone, live := prefix+"gone:main", prefix+"live:main"
	must(t, ns.Init(ctx, gone))
	must(t, ns.Init(ctx, live))
	putCommitRows(t, fl, gone, 1, 30, time.Now())
	putCommitRows(t, fl, live, 1, 5, time.Now())
	late.hook = func() { putCommitRows(t, fl, gone, 31, 33, time.Now()) }
	late.armed.Store(true)
	must(t, ns.Purge(ctx, gone))
	if n := partitionSize(t, fl, gone); n != 0 || late.armed.Load() {
		t.Fatalf("the purge left %d rows (rows written after its transaction: %v)", n, !late.armed.Load())
	}
	putCommitRows(t, fl, gone, 41, 43, time.Now())
	if err := ns.Purge(ctx, gone); !errors.Is(err, nameservice.ErrNotFound) || partitionSize(t, fl, gone) != 0 {
		t.Errorf("purge of the purged ID beside 3 rows: %v, %d rows left, want ErrNotFound and none", err, partitionSize(t, fl, gone))
	}
	if n := partitionSize(t, fl, live); n != 5+5 {
		t.Errorf("the live record's partition holds %d rows, want its 5 items and 5 commit rows", n)
	}
}

// TestDropBranchRows: a branch dropped takes its commit-index rows along,
// and one its own branches keep loses none.
func TestDropBranchRows(t *testing.T) {
	d := openDriver(t)
	ns := nameservice.New(d)
	fl := newFluree(t)
	ctx := context.Background()
	name := "droprows" + testenv.RandomHex(3) + "/db"
	must(t, ns.Init(ctx, name))
	_, err := ns.PublishCommit(ctx, name, 1, testenv.CID("c1"))
	must(t, err)
	_, err = ns.CreateBranch(ctx, name+":dev", nameservice.BranchOptions{})
	must(t, err)
	_, err = ns.CreateBranch(ctx, name+":feature", nameservice.BranchOptions{From: "dev"})
	must(t, err)
	putCommitRows(t, fl, name+":dev", 2, 40, time.Now())
	if err := ns.DropBranch(ctx, name+":dev"); !errors.Is(err, nameservice.ErrHasBranches) {
		t.Fatalf("drop of a branch with a branch: %v, want ErrHasBranches", err)
	}
	if n := partitionSize(t, fl, name+":dev"); n != 5+39 {
		t.Fatalf("a refused drop left %d rows, want the 5 items and 39 commit rows", n)
	}
	must(t, ns.DropBranch(ctx, name+":feature"))
	must(t, ns.DropBranch(ctx, name+":dev"))
	if n := partitionSize(t, fl, name+":dev"); n != 0 {
		t.Errorf("the drop left %d rows", n)
	}
}
