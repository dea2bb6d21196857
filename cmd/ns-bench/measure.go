package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
)

// sizes says how much each measurement does.
type sizes struct {
	pushes  int // timed pushes of one writer (and raw calls)
	writers int // head writers and as many index writers
	rounds  int // pushes per contending writer
	list    int // records to list
}

const warmup = 20

// result is what one target measured.
type result struct {
	name, baseline string
	push, raw      latency
	pushReq        float64 // requests per push; -1 when not counted
	lookupReq      float64
	cont           contention
	list           listing
}

type latency struct {
	p50, p99 time.Duration
	perSec   float64
}

// count returns the requests counted so far, or -1 without a counter.
func (t *target) count() int64 {
	if t.requests == nil {
		return -1
	}
	return t.requests.n.Load()
}

func perOp(t *target, before int64, ops int) float64 {
	if before < 0 || ops == 0 {
		return -1
	}
	return float64(t.count()-before) / float64(ops)
}

func openNS(ctx context.Context, t *target) (*nameservice.NameService, error) {
	d, err := t.open(ctx)
	if err != nil {
		return nil, err
	}
	return nameservice.New(d), nil
}

// measurePush times sequential head publishes of one client, then lookups.
func measurePush(ctx context.Context, t *target, sz sizes, r *result) error {
	ns, err := openNS(ctx, t)
	if err != nil {
		return err
	}
	defer ns.Close()
	const id = "bench/push"
	if err := ns.Init(ctx, id); err != nil {
		return err
	}
	r.push, r.pushReq, err = timed(t, sz.pushes, func(i int) error {
		out, err := ns.PublishCommit(ctx, id, int64(i+1), fmt.Sprintf("fluree:bench/commit/%d", i))
		if err == nil && !out.Applied {
			err = fmt.Errorf("push %d not applied: %v", i, out.Current)
		}
		return err
	})
	if err != nil {
		return err
	}
	before := t.count()
	for range 100 {
		if _, err := ns.Lookup(ctx, id); err != nil {
			return err
		}
	}
	r.lookupReq = perOp(t, before, 100)
	return nil
}

// measureRaw times the raw baseline, writing what the driver wrote.
func measureRaw(ctx context.Context, t *target, sz sizes, r *result) error {
	call, err := t.raw(ctx)
	if err != nil {
		return err
	}
	r.raw, _, err = timed(t, sz.pushes, func(i int) error { return call(ctx, i) })
	return err
}

// timed makes warmup calls, then n timed ones, and returns their latency
// and the requests per timed call.
func timed(t *target, n int, call func(i int) error) (latency, float64, error) {
	for i := range warmup {
		if err := call(i); err != nil {
			return latency{}, 0, err
		}
	}
	lat := make([]time.Duration, 0, n)
	before, start := t.count(), time.Now()
	for i := warmup; i < warmup+n; i++ {
		t0 := time.Now()
		if err := call(i); err != nil {
			return latency{}, 0, err
		}
		lat = append(lat, time.Since(t0))
	}
	total := time.Since(start)
	slices.Sort(lat)
	l := latency{p50: lat[n/2], p99: lat[min(n-1, n*99/100)], perSec: float64(n) / total.Seconds()}
	return l, perOp(t, before, n), nil
}

// contention is what writers of two concerns on one ID saw.
type contention struct {
	pushes    int
	perSec    float64
	stale     int64   // not applied because a writer of the same concern was ahead
	crossed   int64   // not applied although the concern was behind: a conflict across concerns
	errors    int64   // pushes that failed
	requests  float64 // per push; -1 when not counted
	firstFail string
}

// measureContention runs sz.writers head publishers and as many index
// publishers on one ID, each its own client. Publishers of one concern
// race each other (t from a shared counter), so some of their pushes are
// stale; a push not applied while its concern is behind it would be a
// conflict with the other concern.
func measureContention(ctx context.Context, t *target, sz sizes, r *result) error {
	const id = "bench/contended"
	clients := make([]*nameservice.NameService, 2*sz.writers)
	for i := range clients {
		ns, err := openNS(ctx, t)
		if err != nil {
			return err
		}
		defer ns.Close()
		clients[i] = ns
	}
	if err := clients[0].Init(ctx, id); err != nil {
		return err
	}
	var headT, indexT atomic.Int64
	var c contention
	var mu sync.Mutex
	var wg sync.WaitGroup
	before, start := t.count(), time.Now()
	for i, ns := range clients {
		publish, next := ns.PublishCommit, &headT
		if i%2 == 1 {
			publish, next = ns.PublishIndex, &indexT
		}
		wg.Go(func() {
			for range sz.rounds {
				tt := next.Add(1)
				out, err := publish(ctx, id, tt, fmt.Sprintf("fluree:bench/%d/%d", i, tt))
				mu.Lock()
				c.tally(tt, out, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	c.pushes = len(clients) * sz.rounds
	c.perSec = float64(c.pushes) / elapsed.Seconds()
	c.requests = perOp(t, before, c.pushes)
	r.cont = c
	return nil
}

func (c *contention) tally(t int64, out driver.Outcome, err error) {
	switch {
	case err != nil:
		c.errors++
		if c.firstFail == "" {
			c.firstFail = err.Error()
		}
	case out.Applied:
	case out.Current.V >= t:
		c.stale++
	default:
		c.crossed++
		if c.firstFail == "" {
			c.firstFail = fmt.Sprintf("t %d not applied, current %v", t, out.Current)
		}
	}
}

// listing is the cost of listing sz.list records.
type listing struct {
	records  int
	took     time.Duration
	requests int64 // -1 when not counted
}

// measureList creates sz.list ledgers, then lists them in pages of 100.
func measureList(ctx context.Context, t *target, sz sizes, r *result) error {
	ns, err := openNS(ctx, t)
	if err != nil {
		return err
	}
	defer ns.Close()
	if err := createMany(ctx, ns, sz.list); err != nil {
		return err
	}
	before, start := t.count(), time.Now()
	n := 0
	for _, err := range ns.List(ctx, driver.ListOptions{Prefix: "list/", PageSize: 100}) {
		if err != nil {
			return err
		}
		n++
	}
	r.list = listing{records: n, took: time.Since(start), requests: -1}
	if before >= 0 {
		r.list.requests = t.count() - before
	}
	if n != sz.list {
		return fmt.Errorf("listed %d records, want %d", n, sz.list)
	}
	return nil
}

// createMany creates n ledgers list/r0000... with 8 workers.
func createMany(ctx context.Context, ns *nameservice.NameService, n int) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i := range n {
		g.Go(func() error { return ns.Init(ctx, fmt.Sprintf("list/r%04d", i)) })
	}
	return g.Wait()
}
