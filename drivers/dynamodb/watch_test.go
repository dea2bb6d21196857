package dynamodb_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/dynamodb"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/model"
)

// lostRecords answers one GetRecords, once armed, with the
// ExpiredIteratorException DynamoDB Streams sends for an iterator that
// expired, after running gap (the writes the reader then never sees on
// the stream). Every other request goes to the real server.
type lostRecords struct {
	base  http.RoundTripper
	armed atomic.Bool
	gap   func()
}

func (l *lostRecords) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".GetRecords") && l.armed.CompareAndSwap(true, false) {
		l.gap()
		body := `{"__type":"com.amazonaws.dynamodb.v20120810#ExpiredIteratorException","message":"Iterator expired"}`
		return &http.Response{
			StatusCode: http.StatusBadRequest, Status: "400 Bad Request", Request: r,
			Header:        http.Header{"Content-Type": {"application/x-amz-json-1.0"}},
			Body:          io.NopCloser(strings.NewReader(body)),
			ContentLength: int64(len(body)),
		}, nil
	}
	return l.base.RoundTrip(r)
}

func openWith(t *testing.T, cfg dynamodb.Config) *dynamodb.Driver {
	t.Helper()
	d, err := dynamodb.Open(context.Background(), cfg)
	must(t, err)
	t.Cleanup(func() { _ = d.Close() })
	return d
}

func newWatchedLedger(t *testing.T, w *dynamodb.Driver) model.ID {
	t.Helper()
	id, err := model.ParseID("watch" + testenv.RandomHex(4) + "/db")
	must(t, err)
	must(t, w.Create(context.Background(), model.NewLedger(id, 1)))
	return id
}

func pushHead(t *testing.T, w *dynamodb.Driver, id model.ID, from, to int64) {
	t.Helper()
	for v := from; v <= to; v++ {
		out, err := w.Update(context.Background(), id, model.Head, driver.IfAbove(), model.RefValue("c"+strconv.FormatInt(v, 10), v))
		must(t, err)
		if !out.Applied {
			t.Fatalf("push head %d not applied", v)
		}
	}
}

// nextEvent returns the next event, failing the test after 10 s.
func nextEvent(t *testing.T, ch <-chan driver.Event) driver.Event {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("watch closed")
		}
		if ev.Err != nil {
			t.Fatalf("watch failed: %v", ev.Err)
		}
		return ev
	case <-time.After(time.Minute): // a loaded machine's delay is no failure
		t.Fatal("no event within a minute")
	}
	return driver.Event{}
}

func wantHead(t *testing.T, ev driver.Event, id model.ID, old, new int64) {
	t.Helper()
	if ev.ID != id || ev.Concern != model.Head || ev.Old != old || ev.New.V != new || ev.Deleted {
		t.Fatalf("event %+v, want head of %s %d -> %d", ev, id, old, new)
	}
}

// TestWatchReadsStream checks that Watch on a table with a stream reports
// every change as its own event, reading only the stream (no Query or
// BatchGetItem after the baseline), and reports a purge.
func TestWatchReadsStream(t *testing.T) {
	cfg := testConfig(t)
	ct := newCountingTransport(http.DefaultTransport.(*http.Transport).Clone())
	cfg.HTTPClient = &http.Client{Transport: ct, Timeout: 10 * time.Second}
	d, w := openWith(t, cfg), openWith(t, testConfig(t))
	id := newWatchedLedger(t, w)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := d.Watch(ctx, driver.WatchOptions{ID: id})
	must(t, err)
	ct.take()
	pushHead(t, w, id, 1, 10)
	for v := int64(1); v <= 10; v++ {
		wantHead(t, nextEvent(t, ch), id, v-1, v)
	}
	must(t, w.Delete(ctx, id))
	if ev := nextEvent(t, ch); !ev.Deleted || ev.ID != id {
		t.Fatalf("event %+v, want %s deleted", ev, id)
	}
	for op := range ct.take() {
		if op != "GetRecords" && op != "DescribeStream" && op != "GetShardIterator" {
			t.Errorf("the watch sent %s; it should read only the stream", op)
		}
	}
}

// TestWatchRecoversLostRecords loses the stream's position (an expired
// iterator) while five pushes land, and checks that Watch re-reads the
// record and reports them as one event, then goes on with the stream.
func TestWatchRecoversLostRecords(t *testing.T) {
	cfg := testConfig(t)
	w := openWith(t, testConfig(t))
	id := newWatchedLedger(t, w)
	lost := &lostRecords{base: http.DefaultTransport.(*http.Transport).Clone()}
	lost.gap = func() { pushHead(t, w, id, 1, 5) }
	cfg.HTTPClient = &http.Client{Transport: lost, Timeout: 10 * time.Second}
	d := openWith(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := d.Watch(ctx, driver.WatchOptions{Prefix: id.Name})
	must(t, err)
	lost.armed.Store(true)
	wantHead(t, nextEvent(t, ch), id, 0, 5)
	pushHead(t, w, id, 6, 6)
	wantHead(t, nextEvent(t, ch), id, 5, 6)
}

// TestWatchWithoutStreamPolls checks that on a table without a stream the
// driver's Watch says so (model.ErrUnsupported) and the portable Watch
// polls instead.
func TestWatchWithoutStreamPolls(t *testing.T) {
	cfg := testConfig(t)
	cfg.Table = "ns-nostream-" + testenv.RandomHex(4)
	ctx := context.Background()
	client, err := dynamodb.NewClient(ctx, cfg)
	must(t, err)
	in := dynamodb.CreateTableInput(cfg.Table)
	in.StreamSpecification = nil
	_, err = client.CreateTable(ctx, in)
	must(t, err)
	t.Cleanup(func() { _, _ = client.DeleteTable(context.Background(), deleteTableInput(cfg.Table)) })
	d := openWith(t, cfg)
	must(t, d.Provision(ctx)) // waits for ACTIVE; leaves the table without a stream
	id := newWatchedLedger(t, d)
	if _, err := d.Watch(ctx, driver.WatchOptions{ID: id}); !errors.Is(err, model.ErrUnsupported) {
		t.Fatalf("Watch on a table without a stream: %v, want ErrUnsupported", err)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch, err := nameservice.New(d).Watch(wctx, nameservice.WatchOptions{ID: id.String(), Interval: 20 * time.Millisecond})
	must(t, err)
	pushHead(t, d, id, 1, 1)
	wantHead(t, nextEvent(t, ch), id, 0, 1)
}

// TestWatchIgnoresCommitRows: Fluree's publishes write a commit-index row
// beside each head; the watch reports the heads, in order, and takes the
// rows' stream records for what they are (no concern), not for unreadable
// items it warns about.
func TestWatchIgnoresCommitRows(t *testing.T) {
	var logs testenv.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(prev) })
	d := openWith(t, testConfig(t))
	fl := newFluree(t)
	id := newWatchedLedger(t, d)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := d.Watch(ctx, driver.WatchOptions{ID: id})
	must(t, err)
	for v := int64(1); v <= 3; v++ {
		if ok, err := fl.publishCommit(ctx, id.String(), v, testenv.CID(fmt.Sprint(id, v))); err != nil || !ok {
			t.Fatalf("Fluree's publish %d: %v, %v", v, ok, err)
		}
	}
	for v := int64(1); v <= 3; v++ {
		wantHead(t, nextEvent(t, ch), id, v-1, v)
	}
	if strings.Contains(logs.String(), "unreadable stream record") {
		t.Errorf("the watch warned about the commit rows:\n%s", logs.String())
	}
}
