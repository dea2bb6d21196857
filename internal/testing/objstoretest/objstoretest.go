// Package objstoretest holds what the tests of the object-store drivers
// share: an HTTP request counter, the request counts every such driver must
// keep (docs/s3.md, "How writes work"), and the scenario of a purge's
// debris.
package objstoretest

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/layout"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// Counter is an http.RoundTripper that counts the requests it sends.
type Counter struct {
	next http.RoundTripper
	// isList tells a listing request apart (nil: none is); isWrite a write
	// (nil: by its method).
	isList, isWrite func(*http.Request) bool
	All             atomic.Int64
	Writes          atomic.Int64 // PUT, POST, PATCH, DELETE
	Reads           atomic.Int64 // GET, HEAD
	Lists           atomic.Int64 // listings, also counted in Reads
}

// NewCounter returns a counter, which tells listings apart with isList
// (nil: it counts none), and an HTTP client sending through it.
func NewCounter(isList func(*http.Request) bool) (*Counter, *http.Client) {
	c := &Counter{next: http.DefaultTransport.(*http.Transport).Clone(), isList: isList}
	return c, &http.Client{Transport: c, Timeout: 10 * time.Second}
}

// NewAPICounter returns a counter of an API whose requests all have one
// method (DynamoDB's POSTs), telling writes and listings apart with
// isWrite and isList; it is itself the transport to send through.
func NewAPICounter(isWrite, isList func(*http.Request) bool) *Counter {
	return &Counter{next: http.DefaultTransport.(*http.Transport).Clone(), isList: isList, isWrite: isWrite}
}

// RoundTrip implements http.RoundTripper.
func (c *Counter) RoundTrip(r *http.Request) (*http.Response, error) {
	c.All.Add(1)
	read := r.Method == http.MethodGet || r.Method == http.MethodHead
	if c.isWrite != nil {
		read = !c.isWrite(r)
	}
	switch {
	case read:
		c.Reads.Add(1)
		if c.isList != nil && c.isList(r) {
			c.Lists.Add(1)
		}
	default:
		c.Writes.Add(1)
	}
	return c.next.RoundTrip(r)
}

// Reset sets every count to 0.
func (c *Counter) Reset() { c.All.Store(0); c.Writes.Store(0); c.Reads.Store(0); c.Lists.Store(0) }

// RequestCounts counts the requests of each operation on one record
// (layout B) and checks them against its steps' counts. open returns a new
// client (a cold process) whose requests c counts.
func RequestCounts(t *testing.T, c *Counter, open func() driver.Driver) {
	ctx := context.Background()
	id := model.ID{Name: "db", Branch: "main"}
	d, other := open(), open()
	must := func(err error) { testenv.Must(t, err) }
	cold := func(f func(driver.Driver)) func() {
		return func() { d := open(); c.Reset(); f(d) }
	}
	push := func(d driver.Driver, con model.Concern, tv int64, applied bool) func() {
		return func() {
			out, err := d.Update(ctx, id, con, driver.IfAbove(), model.RefValue("a", tv))
			if err != nil || out.Applied != applied {
				t.Fatalf("push %s t%d: applied %v (want %v), %v", con, tv, out.Applied, applied, err)
			}
		}
	}
	lookup := cold(func(d driver.Driver) { _, err := d.Get(ctx, id); must(err) })
	steps := []struct {
		name         string
		run          func()
		want, writes int64 // requests in all, and writes among them
	}{
		{"create", func() { must(other.Create(ctx, model.NewLedger(id, 1))) }, 1, 1},
		{"create of a taken ID (failed write, then read)", func() {
			if err := d.Create(ctx, model.NewLedger(id, 1)); model.Code(err) != model.AlreadyExists {
				t.Fatalf("create of a taken ID: %v", err)
			}
		}, 2, 1},
		{"lookup, unborn index (no sidecar), cold", lookup, 2, 0},
		{"head, cold cache", push(d, model.Head, 1, true), 2, 1},
		{"head, warm cache", push(d, model.Head, 2, true), 1, 1},
		{"head, warm again", push(d, model.Head, 3, true), 1, 1},
		{"index (new sidecar), cold", push(d, model.Index, 1, true), 3, 1},
		{"index, warm cache", push(d, model.Index, 2, true), 1, 1},
		{"lookup with sidecar, cold", lookup, 2, 0},
		{"head, stale cache after another client's push", func() {
			push(other, model.Head, 4, true)()
			c.Reset()
			push(d, model.Head, 5, true)()
		}, 3, 2},
		{"stale publish (conflict), warm cache", push(d, model.Head, 1, false), 1, 0},
		{"stale publish (conflict), cold process", cold(func(d driver.Driver) { push(d, model.Head, 1, false)() }), 1, 0},
		{"purge (2 reads, the sidecar's seal, the mark)", func() { must(d.Delete(ctx, id)) }, 4, 2},
		{"create over a purge's mark (failed write, read, write on the mark)", func() { must(d.Create(ctx, model.NewLedger(id, 1))) }, 3, 2},
	}
	for _, st := range steps {
		c.Reset()
		st.run()
		got, writes := c.All.Load(), c.Writes.Load()
		t.Logf("%-64s %d requests (%d writes)", st.name, got, writes)
		if got != st.want || writes != st.writes {
			t.Errorf("%s: %d requests (%d writes), want %d (%d writes)", st.name, got, writes, st.want, st.writes)
		}
	}
}

// Raw reads and writes objects by layout key, bypassing the driver.
type Raw struct {
	// Get returns key's bytes, nil when it is absent.
	Get func(ctx context.Context, key string) ([]byte, error)
	// Put writes key unconditionally.
	Put func(ctx context.Context, key string, data []byte) error
}

// Debris checks, on a real store, that a record's files left by an earlier
// incarnation of its ID (a purge that stopped after removing the defining
// file) never show through a later create, and that a writer whose cache
// predates a purge is told the record is gone, on layout l. open opens an
// independent client (its own cache) of the store; raw writes the old files
// behind the driver's back.
func Debris(t *testing.T, l jsonld.Layout, open func(t *testing.T) driver.Driver, raw Raw) {
	ctx := context.Background()
	id := model.ID{Name: "debris", Branch: "main"}
	files, err := layout.Files(l, id)
	testenv.Must(t, err)
	a, b := open(t), open(t)
	testenv.Must(t, a.Create(ctx, model.NewLedger(id, 1)))
	for _, c := range []model.Concern{model.Head, model.Index} {
		mustPush(t, a, id, c, "old", 5, true)
	}
	old := make([][]byte, len(files))
	for i, f := range files[1:] {
		old[i+1], err = raw.Get(ctx, f.Key)
		testenv.Must(t, err)
	}
	testenv.Must(t, b.Delete(ctx, id))
	for _, f := range files[1:] {
		data, err := raw.Get(ctx, f.Key)
		testenv.Must(t, err)
		if doc, err := jsonld.Decode(data); data == nil || err != nil || !doc.Purged {
			t.Fatalf("after purge %s is not a tombstone (%v):\n%s", f.Key, err, data)
		}
	}
	// a's cache still holds the purged record's files and tags.
	for _, c := range []model.Concern{model.Head, model.Index} {
		_, err := a.Update(ctx, id, c, driver.IfAbove(), model.RefValue("stale", 6))
		if !errors.Is(err, model.ErrNotFound) {
			t.Fatalf("stale %s push after purge: %v, want ErrNotFound", c, err)
		}
	}
	// A purge that stopped after removing the defining file.
	for i, f := range files[1:] {
		if old[i+1] != nil {
			testenv.Must(t, raw.Put(ctx, f.Key, old[i+1]))
		}
	}
	if got := listPage(t, open(t)); len(got) != 0 {
		t.Fatalf("list shows %d records made of debris", len(got))
	}
	testenv.Must(t, b.Create(ctx, model.NewLedger(id, 1)))
	rec, err := open(t).Get(ctx, id)
	testenv.Must(t, err)
	if !rec.Head.Unborn() || !rec.Index.Unborn() {
		t.Fatalf("re-created record shows the purged one's values: head %v index %v", rec.Head, rec.Index)
	}
	if got := listPage(t, open(t)); len(got) != 1 || !got[0].Index.Unborn() || !got[0].Head.Unborn() {
		t.Fatalf("list after re-create: %v", got)
	}
	// A fresh client pushes over the debris; the stale one evaluates its
	// condition on the new record.
	mustPush(t, open(t), id, model.Index, "new", 1, true)
	mustPush(t, a, id, model.Head, "new", 1, true)
	mustPush(t, a, id, model.Index, "new", 1, false)
	rec, err = open(t).Get(ctx, id)
	testenv.Must(t, err)
	if rec.Head.V != 1 || rec.Index.V != 1 || rec.Index.Payload.String("address") != "new" {
		t.Fatalf("after pushes over debris: head %v index %v", rec.Head, rec.Index)
	}
}

func mustPush(t *testing.T, d driver.Driver, id model.ID, c model.Concern, addr string, v int64, applied bool) {
	t.Helper()
	out, err := d.Update(context.Background(), id, c, driver.IfAbove(), model.RefValue(addr, v))
	if err != nil || out.Applied != applied {
		t.Fatalf("push %s %s t%d: %+v %v, want applied=%v", c, addr, v, out, err, applied)
	}
}

func listPage(t *testing.T, d driver.Driver) []*model.Record {
	t.Helper()
	p, err := d.List(context.Background(), driver.ListOptions{PageSize: 100})
	if err != nil || len(p.Failed) != 0 {
		t.Fatalf("list: %v, failed %v", err, p.Failed)
	}
	return p.Records
}
