package conformance

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"nameservice.dev/nameservice"
)

// Sizes of the race tests: raceClients independent clients each make
// raceRounds successful compare-and-set increments.
const (
	raceClients = 4
	raceRounds  = 15
)

var groupConcurrency = group{name: "Concurrency", guarantee: "concurrent writers: every applied write is counted once and none is lost", cases: []testCase{
	{name: "StatusRaceCountsEverySuccessOnce", quick: true, run: func(e *env) {
		e.init("db")
		e.raceIncrements(nameservice.Status, ready, func(v int64) nameservice.Value { return status(v, "ready", nameservice.Object{"n": v}) })
	}},
	{name: "ConfigRaceCountsEverySuccessOnce", run: func(e *env) {
		e.init("db")
		e.raceIncrements(nameservice.Config, unborn, func(v int64) nameservice.Value { return config(v, nameservice.Object{"n": v}) })
	}},
	{name: "HeadAndIndexPublishersNeverConflict", quick: true, run: func(e *env) {
		e.init("db")
		const n = 25
		runParallel(e, 2, func(i int, c *nameservice.NameService) {
			publish := c.PublishCommit
			if i == 1 {
				publish = c.PublishIndex
			}
			for t := int64(1); t <= n; t++ {
				e.applied(ref("a", t))(publish(e.ctx, e.id("db"), t, "a"))
			}
		})
		e.wantValue("db", nameservice.Head, ref("a", n))
		e.wantValue("db", nameservice.Index, ref("a", n))
	}},
	{name: "StatusAndConfigWritersNeverConflict", run: func(e *env) {
		e.init("db")
		const n = 15
		runParallel(e, 3, func(i int, c *nameservice.NameService) {
			for v := int64(1); v <= n; v++ {
				switch i {
				case 0:
					e.applied(status(v+1, "ready", nil))(c.PushStatus(e.ctx, e.id("db"), status(v, "ready", nil), status(v+1, "ready", nil)))
				case 1:
					prev := unborn
					if v > 1 {
						prev = config(v-1, nameservice.Object{"v": v - 1})
					}
					e.applied(config(v, nameservice.Object{"v": v}))(c.PushConfig(e.ctx, e.id("db"), prev, config(v, nameservice.Object{"v": v})))
				case 2:
					e.applied(ref("c", v))(c.PublishCommit(e.ctx, e.id("db"), v, "c"))
				}
			}
		})
	}},
	{name: "ConcurrentPublishersEndAtMax", quick: true, run: func(e *env) {
		e.init("db")
		var applied atomic.Int64
		runParallel(e, raceClients, func(i int, c *nameservice.NameService) {
			for t := int64(i + 1); t <= 40; t += raceClients {
				out, err := c.PublishCommit(e.ctx, e.id("db"), t, "c")
				e.must(err)
				if out.Applied {
					applied.Add(1)
				} else if out.Current.V < t {
					e.t.Errorf("publish t=%d not applied, yet current head is lower: %v", t, out.Current)
				}
			}
		})
		e.wantValue("db", nameservice.Head, ref("c", 40))
		if applied.Load() < 1 {
			e.t.Fatal("no publish applied")
		}
	}},
	{name: "RacingPurgesOneWins", run: func(e *env) {
		for round := range 5 {
			e.init("db") // the same ID each round: a purge frees the name
			purge := func(c *nameservice.NameService) error { return c.Purge(e.ctx, e.id("db")) }
			if n := raceWins(e, raceClients, nameservice.ErrNotFound, purge); n != 1 {
				e.t.Fatalf("round %d: %d of %d racing purges succeeded, want exactly 1", round, n, raceClients)
			}
		}
	}},
}}

// raceIncrements races compare-and-set increments of concern c from start:
// every success must be counted once and the final watermark be exact.
func (e *env) raceIncrements(c nameservice.Concern, start nameservice.Value, mk func(v int64) nameservice.Value) {
	e.t.Helper()
	push := (*nameservice.NameService).PushConfig
	if c == nameservice.Status {
		push = (*nameservice.NameService).PushStatus
	}
	won := make([][]int64, raceClients)
	runParallel(e, raceClients, func(i int, ns *nameservice.NameService) {
		cur := start
		for len(won[i]) < raceRounds {
			next := mk(cur.V + 1)
			out, err := push(ns, e.ctx, e.id("db"), cur, next)
			if err != nil {
				e.t.Errorf("client %d: %v", i, err)
				return
			}
			if out.Applied {
				won[i] = append(won[i], next.V)
			}
			cur = out.Current
		}
	})
	seen := map[int64]int{}
	for i, vs := range won {
		for _, v := range vs {
			if j, dup := seen[v]; dup {
				e.t.Fatalf("clients %d and %d both won %s %d", j, i, c.Watermark(), v)
			}
			seen[v] = i
		}
	}
	want := start.V + raceClients*raceRounds
	e.wantValue("db", c, mk(want))
	if len(seen) != raceClients*raceRounds {
		e.t.Fatalf("%d successes, want %d", len(seen), raceClients*raceRounds)
	}
}

var groupContext = group{name: "Context", guarantee: "cancellation: a canceled or expired context fails every operation", cases: []testCase{
	{name: "CanceledContextFailsEveryOperation", quick: true, run: func(e *env) {
		e.init("db")
		ctx, cancel := context.WithCancel(e.ctx)
		cancel()
		e.everyOpFails(ctx, context.Canceled)
	}},
	{name: "ExpiredDeadlineFailsEveryOperation", run: func(e *env) {
		e.init("db")
		ctx, cancel := context.WithDeadline(e.ctx, time.Now().Add(-time.Second))
		defer cancel()
		e.everyOpFails(ctx, context.DeadlineExceeded)
	}},
}}

// everyOpFails checks that every operation with ctx, which is done,
// returns promptly with an error wrapping want, changing nothing.
func (e *env) everyOpFails(ctx context.Context, want error) {
	e.t.Helper()
	id := e.id("db")
	ops := map[string]func() error{
		"init":   func() error { return e.ns.Init(ctx, e.id("other")) },
		"lookup": func() error { _, err := e.ns.Lookup(ctx, id); return err },
		"commit": func() error { _, err := e.ns.PublishCommit(ctx, id, 1, "c"); return err },
		"index":  func() error { _, err := e.ns.PublishIndex(ctx, id, 1, "i"); return err },
		"cas": func() error {
			_, err := e.ns.CompareAndSetRef(ctx, id, nameservice.Head, &unborn, nameservice.Ref{Address: "c", T: 1})
			return err
		},
		"status":  func() error { _, err := e.ns.PushStatus(ctx, id, ready, status(2, "x", nil)); return err },
		"config":  func() error { _, err := e.ns.PushConfig(ctx, id, unborn, config(1, nameservice.Object{})); return err },
		"retract": func() error { return e.ns.Retract(ctx, id) },
		"purge":   func() error { return e.ns.Purge(ctx, id) },
		"gs":      func() error { return e.ns.PublishGraphSource(ctx, e.id("gs"), "db:X", nil, nil) },
		"list": func() error {
			for _, err := range e.ns.List(ctx, nameservice.ListOptions{Prefix: e.prefix}) {
				return err
			}
			return nil
		},
	}
	for name, op := range ops {
		start := time.Now()
		if err := op(); !errors.Is(err, want) {
			e.t.Errorf("%s with a done context: error = %v, want %v", name, err, want)
		}
		if d := time.Since(start); d > 2*time.Second {
			e.t.Errorf("%s with a done context took %v", name, d)
		}
	}
	if r := e.lookup("db"); !r.Head.Equal(unborn) || !r.Status.Equal(ready) || r.Retracted {
		e.t.Fatalf("an operation with a done context changed the record: %s", js(r))
	}
	e.wantAbsent("other")
}
