package s3etag_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/s3etag"
	"nameservice.dev/nameservice/internal/testing/objstoretest"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// pollMark is when a poll began and the requests a counter had sent then.
type pollMark struct {
	at         time.Time
	all, lists int64
}

// polls notes the requests sent so far at the start of each listing of a
// polling watch (its first page), and returns the requests of the polls
// that ran to the end.
type polls struct {
	cnt    *objstoretest.Counter
	mu     sync.Mutex
	starts []pollMark
}

func (p *polls) mark(token string) {
	if token != "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.starts = append(p.starts, pollMark{time.Now(), p.cnt.All.Load(), p.cnt.Lists.Load()})
}

// complete returns, for each poll that ran to the end after the first
// snapshot, its list calls and its other requests, and the mean time
// from the start of one poll to the next.
func (p *polls) complete() (lists, others []int64, every time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := 2; i < len(p.starts); i++ {
		a, b := p.starts[i-1], p.starts[i]
		lists = append(lists, b.lists-a.lists)
		others = append(others, (b.all-b.lists)-(a.all-a.lists))
	}
	if len(lists) > 0 {
		every = p.starts[len(p.starts)-1].at.Sub(p.starts[1].at) / time.Duration(len(lists))
	}
	return lists, others, every
}

func (p *polls) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return max(0, len(p.starts)-2)
}

// versionsWatched is the driver as NameService.Watch sees it: with
// Versions, each poll beginning with one.
type versionsWatched struct {
	*s3etag.Driver
	polls
}

func (w *versionsWatched) Versions(ctx context.Context, opts driver.VersionsOptions) (*driver.VersionPage, error) {
	w.mark(opts.PageToken)
	return w.Driver.Versions(ctx, opts)
}

// listWatched hides Versions, so that each poll re-lists every record as
// before the capability: the baseline.
type listWatched struct {
	driver.Driver
	polls
}

func (w *listWatched) List(ctx context.Context, opts driver.ListOptions) (*driver.Page, error) {
	w.mark(opts.PageToken)
	return w.Driver.List(ctx, opts)
}

// TestWatchPollReadsWhatChanged counts the requests of a polling watch
// over n records: a poll is the listing's ⌈objects/1000⌉ ListObjectsV2
// calls, plus one GET of the one file another client changed (the head's,
// in a record that also has an index sidecar), and nothing more.
func TestWatchPollReadsWhatChanged(t *testing.T) {
	endpoint, bucket := newBucket(t)
	ctx := context.Background()
	cfg := baseConfig(endpoint, bucket, jsonld.LayoutB)
	writer, err := s3etag.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	const n = 150
	ids := make([]model.ID, n)
	for i := range n {
		ids[i] = model.ID{Name: fmt.Sprintf("w-%04d", i), Branch: "main"}
		if err := writer.Create(ctx, model.NewLedger(ids[i], 1)); err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 { // a third have an index sidecar: 200 objects
			if _, err := writer.Update(ctx, ids[i], model.Index, driver.IfAbove(), model.RefValue("ix", 1)); err != nil {
				t.Fatal(err)
			}
		}
	}
	cnt, httpClient := newCounter()
	cfg.HTTPClient = httpClient
	watcher, err := s3etag.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	w := &versionsWatched{Driver: watcher, polls: polls{cnt: cnt}}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch, err := nameservice.New(w).Watch(wctx, nameservice.WatchOptions{Prefix: "w-", Interval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	waitPolls := func(k int) {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); w.count() < k; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d polls after a minute, want %d", w.count(), k)
			}
		}
	}
	waitPolls(2)
	changed := ids[n/2-n/2%3] // one with an index sidecar
	if out, err := writer.Update(ctx, changed, model.Head, driver.IfAbove(), model.RefValue("c", 1)); err != nil || !out.Applied {
		t.Fatalf("push: %v %v", out, err)
	}
	select {
	case ev := <-ch:
		if ev.Err != nil || ev.ID != changed || ev.Concern != model.Head || ev.Old != 0 || ev.New.V != 1 {
			t.Fatalf("event %+v, want %s head 0 -> 1", ev, changed)
		}
	case <-time.After(time.Minute):
		t.Fatal("no event a minute after the push")
	}
	waitPolls(w.count() + 2) // the poll that reported it ended, and one more
	cancel()
	for ev := range ch {
		if ev.Err == nil {
			t.Fatalf("unexpected event %+v", ev)
		}
	}
	lists, others, _ := w.complete()
	t.Logf("%d records: list calls per poll %v, other requests per poll %v", n, lists, others)
	var read int64
	for i := range lists {
		if lists[i] != 1 {
			t.Errorf("poll %d: %d list calls, want 1 (200 objects)", i, lists[i])
		}
		read += others[i]
	}
	if read != 1 {
		t.Errorf("the polls read %d objects in all, want 1: the changed file", read)
	}
}

// BenchmarkWatch seeds 10,000 records (layout B) and, with one writer
// pushing 10 head changes per second to records spread over them, runs a
// polling watch (NameService.Watch, 1 s interval) for NS_BENCH_WATCH_FOR
// (15 s unless set): first with the driver's Versions, then with it hidden,
// each poll re-listing every record as before. It reports, for both, the
// list calls and other requests per poll (polls after the first snapshot
// that ran to the end), the time from one poll's start to the next, and the
// latency from the start of each write to the event that reports it
// (p50/p99, in ms).
//
//	go test -run '^$' -bench 'Watch$' -benchtime 1x -timeout 60m ./drivers/s3etag/
func BenchmarkWatch(b *testing.B) {
	endpoint, bucket := newBucket(b)
	ctx := context.Background()
	cfg := baseConfig(endpoint, bucket, jsonld.LayoutB)
	d, err := s3etag.Open(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	n := 10_000
	if s := os.Getenv("NS_BENCH_WATCH_N"); s != "" {
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			b.Fatalf("NS_BENCH_WATCH_N=%q is not a positive number", s)
		}
	}
	start := time.Now()
	seedS3(b, d, n)
	b.Logf("seeded %d records in %s", n, time.Since(start).Round(time.Millisecond))
	cnt, httpClient := newCounter()
	cfg.HTTPClient = httpClient
	counted, err := s3etag.Open(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	load := testenv.WatchLoad{Writer: d, N: n, ID: func(r int) model.ID { return model.ID{Name: fmt.Sprintf("ledger-%06d", r), Branch: "main"} },
		For: testenv.WatchFor(b), T: map[int]int64{}, Wait: 20 * time.Minute, Reported: 1}
	for b.Loop() {
		vw := &versionsWatched{Driver: counted, polls: polls{cnt: cnt}}
		load.Settled = func() bool { return vw.polls.count() >= 2 }
		vlat := testenv.WatchLatency(b, load, func(ctx context.Context) (<-chan driver.Event, error) {
			return nameservice.New(vw).Watch(ctx, nameservice.WatchOptions{Interval: time.Second})
		})
		lw := &listWatched{Driver: counted, polls: polls{cnt: cnt}}
		load.Settled = func() bool { return lw.polls.count() >= 2 }
		llat := testenv.WatchLatency(b, load, func(ctx context.Context) (<-chan driver.Event, error) {
			return nameservice.New(lw).Watch(ctx, nameservice.WatchOptions{Interval: time.Second})
		})
		for _, r := range []struct {
			name string
			lat  [2]float64
			p    *polls
		}{{"versions", vlat, &vw.polls}, {"relist", llat, &lw.polls}} {
			lists, others, every := r.p.complete()
			b.ReportMetric(r.lat[0], r.name+"-p50-ms")
			b.ReportMetric(r.lat[1], r.name+"-p99-ms")
			b.ReportMetric(mean(lists), r.name+"-lists/poll")
			b.ReportMetric(mean(others), r.name+"-gets/poll")
			b.ReportMetric(float64(len(lists)), r.name+"-polls")
			b.ReportMetric(every.Seconds(), r.name+"-s/poll")
			b.Logf("%s: list calls per poll %v, other requests per poll %v", r.name, lists, others)
		}
	}
	b.ReportMetric(0, "ns/op")
}

func mean(l []int64) float64 {
	if len(l) == 0 {
		return -1
	}
	var s int64
	for _, v := range l {
		s += v
	}
	return float64(s) / float64(len(l))
}
