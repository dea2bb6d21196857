package dynamodb_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/dynamodb"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/model"
)

// countingTransport counts requests by DynamoDB operation (the X-Amz-Target
// header, e.g. "DynamoDB_20120810.UpdateItem" counts as UpdateItem), and
// the answers that rightly cost one more call: failed attempts (which the
// SDK retries), including answers whose body broke off while it was read,
// and BatchGetItem and BatchWriteItem answers that left keys unprocessed.
type countingTransport struct {
	base        http.RoundTripper
	mu          sync.Mutex
	n           map[string]int
	failed      map[string]int
	unprocessed map[string]int
}

func newCountingTransport(base http.RoundTripper) *countingTransport {
	return &countingTransport{base: base, n: map[string]int{}, failed: map[string]int{}, unprocessed: map[string]int{}}
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	op := r.Header.Get("X-Amz-Target")
	if i := strings.LastIndexByte(op, '.'); i >= 0 {
		op = op[i+1:]
	}
	c.add(&c.n, op)
	resp, err := c.base.RoundTrip(r)
	switch {
	case err != nil || resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		c.add(&c.failed, op)
	case (op == "BatchGetItem" || op == "BatchWriteItem") && resp.StatusCode == http.StatusOK:
		err = c.noteUnprocessed(op, resp)
	default:
		resp.Body = &brokenBody{ReadCloser: resp.Body, noteOnce: sync.OnceFunc(func() { c.add(&c.failed, op) })}
	}
	return resp, err
}

// add counts op in the map at counts (a field of c, which take and
// takeRetries replace under the lock).
func (c *countingTransport) add(counts *map[string]int, op string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	(*counts)[op]++
}

// brokenBody notes a body whose read fails: on a loaded machine a
// connection to DynamoDB Local at times breaks in the middle of an answer,
// and the SDK sends the call again ("use of closed network connection" is
// one of its retryable errors). net/http returns the last bytes of a body
// of known length with io.EOF, so a read error means the SDK could not
// decode it.
type brokenBody struct {
	io.ReadCloser
	noteOnce func()
}

func (b *brokenBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		b.noteOnce()
	}
	return n, err
}

// noteUnprocessed reads a batch answer, counts it when it left keys or
// writes unprocessed, and puts the body back for the SDK. A body that
// breaks off counts as a failed attempt.
func (c *countingTransport) noteUnprocessed(op string, resp *http.Response) error {
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		c.add(&c.failed, op)
		return err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	var out struct {
		UnprocessedKeys, UnprocessedItems map[string]json.RawMessage
	}
	if json.Unmarshal(body, &out) == nil && len(out.UnprocessedKeys)+len(out.UnprocessedItems) > 0 {
		c.add(&c.unprocessed, op)
	}
	return nil
}

// takeRetries returns, per operation, the calls since the last take that
// were caused by an earlier answer (a failed attempt, unprocessed keys),
// and resets the counts.
func (c *countingTransport) takeRetries() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.failed
	for op, k := range c.unprocessed {
		n[op] += k
	}
	c.failed, c.unprocessed = map[string]int{}, map[string]int{}
	return n
}

// total returns the requests counted since the last take.
func (c *countingTransport) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, k := range c.n {
		n += k
	}
	return n
}

// take returns the counts since the last call and resets them.
func (c *countingTransport) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = map[string]int{}
	return n
}

// countingNS returns a NameService over a driver whose requests ct counts.
func countingNS(t *testing.T) (*nameservice.NameService, *countingTransport) {
	t.Helper()
	cfg := testConfig(t)
	ct := newCountingTransport(http.DefaultTransport.(*http.Transport).Clone())
	cfg.HTTPClient = &http.Client{Transport: ct, Timeout: 10 * time.Second}
	d, err := dynamodb.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return nameservice.New(d), ct
}

// wantRequests fails unless exactly want were sent since the last check,
// plus, for an operation want counts, one call per failed attempt or
// unprocessed batch (sent again). A conditional write's lost answer, which
// the driver settles with a read of its own, still fails it.
func wantRequests(t *testing.T, ct *countingTransport, what string, want map[string]int) {
	t.Helper()
	want = maps.Clone(want)
	for op, n := range ct.takeRetries() {
		if want[op] > 0 {
			want[op] += n
		}
	}
	got := ct.take()
	if !maps.Equal(got, want) {
		t.Errorf("%s: requests %v, want %v", what, got, want)
	}
}

func TestRequestCounts(t *testing.T) {
	ns, ct := countingNS(t)
	ctx := context.Background()
	id := "count" + testenv.RandomHex(4) + "/db"
	one := func(op string) map[string]int { return map[string]int{op: 1} }

	must(t, ns.Init(ctx, id))
	wantRequests(t, ct, "init", one("TransactWriteItems"))

	_, err := ns.Lookup(ctx, id)
	must(t, err)
	wantRequests(t, ct, "lookup", one("Query"))

	pushes := []struct {
		name    string
		push    func() (nameservice.Outcome, error)
		applied bool
	}{
		{"publish commit, applied", func() (nameservice.Outcome, error) { return ns.PublishCommit(ctx, id, 5, "c5") }, true},
		{"publish commit, stale", func() (nameservice.Outcome, error) { return ns.PublishCommit(ctx, id, 3, "c3") }, false},
		{"publish index, applied", func() (nameservice.Outcome, error) { return ns.PublishIndex(ctx, id, 5, "i5") }, true},
		{"admin publish index, same t", func() (nameservice.Outcome, error) { return ns.AdminPublishIndex(ctx, id, 5, "i5b") }, true},
		{"cas head, applied", func() (nameservice.Outcome, error) {
			cur := nameservice.RefValue("c5", 5)
			return ns.CompareAndSetRef(ctx, id, nameservice.Head, &cur, nameservice.Ref{Address: "c6", T: 6})
		}, true},
		{"cas head, conflict", func() (nameservice.Outcome, error) {
			old := nameservice.RefValue("c5", 5)
			return ns.CompareAndSetRef(ctx, id, nameservice.Head, &old, nameservice.Ref{Address: "c7", T: 7})
		}, false},
		{"push status, applied", func() (nameservice.Outcome, error) {
			return ns.PushStatus(ctx, id, nameservice.StatusValue(1, "ready", nil), nameservice.StatusValue(2, "busy", nil))
		}, true},
		{"push status, conflict", func() (nameservice.Outcome, error) {
			return ns.PushStatus(ctx, id, nameservice.StatusValue(1, "ready", nil), nameservice.StatusValue(2, "other", nil))
		}, false},
		{"push config, applied", func() (nameservice.Outcome, error) {
			return ns.PushConfig(ctx, id, nameservice.Value{}, nameservice.Value{V: 1, Payload: nameservice.Object{"default_context": "ctx"}})
		}, true},
		{"push config, conflict", func() (nameservice.Outcome, error) {
			return ns.PushConfig(ctx, id, nameservice.Value{}, nameservice.Value{V: 1, Payload: nameservice.Object{"k": 1}})
		}, false},
	}
	for _, p := range pushes {
		out, err := p.push()
		must(t, err)
		if out.Applied != p.applied {
			t.Errorf("%s: applied %v, want %v", p.name, out.Applied, p.applied)
		}
		wantRequests(t, ct, p.name, one("UpdateItem"))
	}

	must(t, ns.Retract(ctx, id))
	wantRequests(t, ct, "retract", one("TransactWriteItems"))
	must(t, ns.Retract(ctx, id))
	wantRequests(t, ct, "retract again (no-op)", one("TransactWriteItems"))
	must(t, ns.Purge(ctx, id))
	wantRequests(t, ct, "purge", map[string]int{"Query": 2, "TransactWriteItems": 1}) // keys before and after
}

// TestListRequestCount lists 250 ledgers in pages of 100. The cost is
// kinds × pages GSI queries (each page asks the GSI for PageSize+1 entries
// per kind, so no empty last page is needed) plus, per page, ⌈keys/100⌉
// BatchGetItem calls with 5 keys per ledger: ⌈500/100⌉ + ⌈500/100⌉ +
// ⌈250/100⌉ = 13.
func TestListRequestCount(t *testing.T) {
	ns, ct := countingNS(t)
	ctx := context.Background()
	prefix := "list" + testenv.RandomHex(4) + "/"
	const n, pageSize = 250, 100
	createAll(t, n, func(i int) error { return ns.Init(ctx, fmt.Sprintf("%sdb%03d", prefix, i)) })
	ct.take()
	ct.takeRetries()
	for _, tc := range []struct {
		kind  nameservice.Kind
		kinds int
	}{{nameservice.Ledger, 1}, {"", 2}} {
		got := 0
		for r, err := range ns.List(ctx, nameservice.ListOptions{Kind: tc.kind, Prefix: prefix, PageSize: pageSize}) {
			must(t, err)
			if want := fmt.Sprintf("%sdb%03d:main", prefix, got); r.ID.String() != want {
				t.Fatalf("record %d is %s, want %s", got, r.ID, want)
			}
			got++
		}
		if got != n {
			t.Fatalf("listed %d records, want %d", got, n)
		}
		pages := (n + pageSize - 1) / pageSize
		batches := 0
		for left := n; left > 0; left -= pageSize {
			batches += (min(left, pageSize)*5 + 99) / 100
		}
		retries := ct.takeRetries() // failed attempts and unprocessed keys each cost one more call
		want := map[string]int{"Query": tc.kinds*pages + retries["Query"], "BatchGetItem": batches + retries["BatchGetItem"]}
		wantRequests(t, ct, fmt.Sprintf("list %d records of kind %q", n, tc.kind), want)
		t.Logf("list %d ledgers, kind %q, pages of %d: %v (retried calls: %v)", n, tc.kind, pageSize, want, retries)
	}
}

// createAll runs create(i) for every i below n, eight at a time: the
// records a test lists are made, not counted.
func createAll(t *testing.T, n int, create func(i int) error) {
	t.Helper()
	var g errgroup.Group
	g.SetLimit(8)
	for i := range n {
		g.Go(func() error { return create(i) })
	}
	must(t, g.Wait())
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestListRemembersOnlyGraphSources lists 40 ledgers and 2 graph sources
// with a fresh client: its kind cache then holds the 2 graph sources and no
// ledger (a listing of 100,000 ledgers must not keep anything per ledger),
// and a config push to either kind costs one UpdateItem, because the
// listing told the client each record's kind.
func TestListRemembersOnlyGraphSources(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig(t)
	writer, err := dynamodb.Open(ctx, cfg)
	must(t, err)
	t.Cleanup(func() { _ = writer.Close() })
	prefix := "kinds" + testenv.RandomHex(4) + "/"
	id := func(name string) model.ID { return model.ID{Name: prefix + name, Branch: "main"} }
	createAll(t, 40, func(i int) error { return writer.Create(ctx, model.NewLedger(id(fmt.Sprintf("l%02d", i)), 1)) })
	for _, g := range []string{"g1", "g2"} {
		must(t, writer.Create(ctx, model.NewGraphSource(id(g), "db:Bm25Index", nil, nil, 1)))
	}

	ct := newCountingTransport(http.DefaultTransport.(*http.Transport).Clone())
	cfg.HTTPClient = &http.Client{Transport: ct, Timeout: 10 * time.Second}
	reader, err := dynamodb.Open(ctx, cfg)
	must(t, err)
	t.Cleanup(func() { _ = reader.Close() })
	recs, failed, err := testenv.ListAll(ctx, reader, driver.ListOptions{Prefix: prefix, PageSize: 10})
	must(t, err)
	if recs != 42 || failed != 0 {
		t.Fatalf("listed %d records and %d failures, want 42 and 0", recs, failed)
	}
	if n := dynamodb.CachedKinds(reader); n != 2 {
		t.Errorf("kind cache holds %d records after listing 40 ledgers and 2 graph sources, want 2", n)
	}
	ct.take()
	cfgValue := model.Value{V: 1, Payload: model.Object{"k": "v"}}
	for _, name := range []string{"g1", "l07"} {
		out, err := reader.Update(ctx, id(name), model.Config, driver.IfAbove(), cfgValue)
		must(t, err)
		if !out.Applied {
			t.Errorf("config push to %s: not applied", name)
		}
		wantRequests(t, ct, "config push to listed "+name, map[string]int{"UpdateItem": 1})
	}
}
