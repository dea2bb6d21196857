package conformance

import (
	"context"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
)

// watchInterval is the polling interval the suite asks for; drivers with a
// native change feed (driver.Watcher) ignore it.
const watchInterval = 20 * time.Millisecond

var groupWatch = group{name: "Watch", guarantee: "watch: every change to a watched record is reported once, in order", cases: []testCase{
	{name: "SeesEveryHeadChangeInOrder", quick: true, run: func(e *env) {
		e.init("db")
		evs := e.watch(nameservice.WatchOptions{ID: e.id("db")}, func(w *nameservice.NameService) {
			for t := int64(1); t <= 10; t++ {
				e.applied(ref("c", t))(w.PublishCommit(e.ctx, e.id("db"), t, "c"))
				time.Sleep(2 * time.Millisecond)
			}
		}, func(ev nameservice.Event) bool { return ev.Concern == nameservice.Head && ev.New.V == 10 })
		e.checkChain(evs, nameservice.Head, 0, 10)
	}},
	{name: "NoEventForNoOpWrites", run: func(e *env) {
		e.initAt("db", 5)
		evs := e.watch(nameservice.WatchOptions{ID: e.id("db")}, func(w *nameservice.NameService) {
			e.rejected(ref("c5", 5))(w.PublishCommit(e.ctx, e.id("db"), 4, "c4"))
			e.rejected(ready)(w.PushStatus(e.ctx, e.id("db"), status(1, "other", nil), status(2, "x", nil)))
			e.must(w.Retract(e.ctx, e.id("db")))
			e.must(w.Retract(e.ctx, e.id("db"))) // the second changes nothing
		}, func(ev nameservice.Event) bool { return ev.Concern == nameservice.Status && ev.New.V == 2 })
		for _, ev := range evs {
			if ev.Concern != nameservice.Status || ev.New.V != 2 {
				e.t.Fatalf("unexpected event after no-op writes: %+v", ev)
			}
		}
	}},
	{name: "PrefixSeesEveryRecordAndConcern", run: func(e *env) {
		e.init("a", "b")
		evs := e.watch(nameservice.WatchOptions{Prefix: e.prefix}, func(w *nameservice.NameService) {
			e.applied(ref("c1", 1))(w.PublishCommit(e.ctx, e.id("a"), 1, "c1"))
			e.applied(ref("i1", 1))(w.PublishIndex(e.ctx, e.id("b"), 1, "i1"))
			cfg := config(1, nameservice.Object{"k": 1})
			e.applied(cfg)(w.PushConfig(e.ctx, e.id("b"), unborn, cfg))
		}, func(ev nameservice.Event) bool { return ev.Concern == nameservice.Config && ev.New.V == 1 })
		seen := map[string]bool{}
		for _, ev := range evs {
			seen[ev.ID.String()+" "+ev.Concern.String()] = true
		}
		for _, want := range []string{e.ids("a")[0] + " head", e.ids("b")[0] + " index", e.ids("b")[0] + " config"} {
			if !seen[want] {
				e.t.Fatalf("no event for %s; got %+v", want, evs)
			}
		}
	}},
	{name: "HeadsOnlySeeNoOtherConcern", quick: true, run: func(e *env) {
		e.init("db")
		heads := []nameservice.Concern{nameservice.Head}
		evs := e.watch(nameservice.WatchOptions{Prefix: e.prefix, Concerns: heads}, func(w *nameservice.NameService) {
			e.applied(ref("i1", 1))(w.PublishIndex(e.ctx, e.id("db"), 1, "i1"))
			st := status(2, "indexing", nil)
			e.applied(st)(w.PushStatus(e.ctx, e.id("db"), ready, st))
			cfg := config(1, nameservice.Object{"k": 1})
			e.applied(cfg)(w.PushConfig(e.ctx, e.id("db"), unborn, cfg))
			e.applied(ref("c1", 1))(w.PublishCommit(e.ctx, e.id("db"), 1, "c1"))
		}, func(ev nameservice.Event) bool { return ev.Concern == nameservice.Head && ev.New.V == 1 })
		e.onlyEvents(evs, func(ev nameservice.Event) bool { return ev.Concern == nameservice.Head })
		e.checkChain(evs, nameservice.Head, 0, 1)
	}},
	{name: "ConcernsOfOneRecord", run: func(e *env) {
		e.init("db")
		sel := []nameservice.Concern{nameservice.Index, nameservice.Status}
		evs := e.watch(nameservice.WatchOptions{ID: e.id("db"), Concerns: sel}, func(w *nameservice.NameService) {
			e.applied(ref("c1", 1))(w.PublishCommit(e.ctx, e.id("db"), 1, "c1"))
			cfg := config(1, nameservice.Object{"k": 1})
			e.applied(cfg)(w.PushConfig(e.ctx, e.id("db"), unborn, cfg))
			e.applied(ref("i1", 1))(w.PublishIndex(e.ctx, e.id("db"), 1, "i1"))
			e.must(w.Retract(e.ctx, e.id("db")))
		}, func(ev nameservice.Event) bool { return ev.Concern == nameservice.Status && ev.New.V == 2 })
		e.onlyEvents(evs, func(ev nameservice.Event) bool {
			return ev.Concern == nameservice.Index || ev.Concern == nameservice.Status
		})
		e.checkChain(evs, nameservice.Index, 0, 1)
	}},
	{name: "KindSelectsRecords", run: func(e *env) {
		e.init("l", "gone")
		e.graphSource("g", nil)
		evs := e.watch(nameservice.WatchOptions{Prefix: e.prefix, Kind: nameservice.GraphSource}, func(w *nameservice.NameService) {
			e.applied(ref("c1", 1))(w.PublishCommit(e.ctx, e.id("l"), 1, "c1"))
			e.applied(ref("i1", 1))(w.PublishIndex(e.ctx, e.id("l"), 1, "i1"))
			e.must(w.Purge(e.ctx, e.id("gone")))
			e.must(w.Init(e.ctx, e.id("new")))
			e.applied(ref("i1", 1))(w.PublishIndex(e.ctx, e.id("new"), 1, "i1"))
			e.applied(ref("i2", 2))(w.PublishIndex(e.ctx, e.id("g"), 2, "i2"))
		}, func(ev nameservice.Event) bool { return ev.Concern == nameservice.Index && ev.New.V == 2 })
		g := e.ids("g")[0]
		e.onlyEvents(evs, func(ev nameservice.Event) bool { return ev.ID.String() == g })
	}},
	{name: "PurgeIsReportedToEverySelection", run: func(e *env) {
		e.init("db")
		evs := e.watch(nameservice.WatchOptions{Prefix: e.prefix, Concerns: []nameservice.Concern{nameservice.Config}, Kind: nameservice.Ledger},
			func(w *nameservice.NameService) { e.must(w.Purge(e.ctx, e.id("db"))) },
			func(ev nameservice.Event) bool { return ev.Deleted })
		e.onlyEvents(evs, func(ev nameservice.Event) bool { return ev.Deleted && ev.ID.String() == e.ids("db")[0] })
	}},
	{name: "MalformedSelectionIsInvalid", run: func(e *env) {
		_, err := e.ns.Watch(e.ctx, nameservice.WatchOptions{Prefix: e.prefix, Concerns: []nameservice.Concern{7}})
		e.wantErr(err, nameservice.ErrInvalidArgument)
		_, err = e.ns.Watch(e.ctx, nameservice.WatchOptions{Prefix: e.prefix, Kind: "table"})
		e.wantErr(err, nameservice.ErrInvalidArgument)
	}},
	{name: "PurgeIsReported", run: func(e *env) {
		e.init("db")
		evs := e.watch(nameservice.WatchOptions{Prefix: e.prefix}, func(w *nameservice.NameService) {
			e.must(w.Purge(e.ctx, e.id("db")))
		}, func(ev nameservice.Event) bool { return ev.Deleted })
		if last := evs[len(evs)-1]; last.ID.String() != e.ids("db")[0] {
			e.t.Fatalf("delete event for %s, want %s", last.ID, e.ids("db")[0])
		}
	}},
}}

// watch starts a watch, runs write with a second client, and collects events
// until done reports the last one expected, and then for ten polling
// intervals, so that any event that should not have been sent is seen.
func (e *env) watch(opts nameservice.WatchOptions, write func(*nameservice.NameService), done func(nameservice.Event) bool) []nameservice.Event {
	e.t.Helper()
	ctx, cancel := context.WithCancel(e.ctx)
	e.t.Cleanup(cancel)
	opts.Interval = watchInterval
	ch, err := e.ns.Watch(ctx, opts)
	e.must(err)
	// The writer is joined before returning, so that it never reports a
	// failure after its test has ended.
	c, wrote := e.client(), make(chan struct{})
	go func() { defer close(wrote); write(c) }()
	defer func() { <-wrote }()
	var evs []nameservice.Event
	var grace <-chan time.Time
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				e.t.Fatalf("watch closed early after %+v", evs)
			}
			if ev.Err != nil {
				e.t.Fatalf("watch failed: %v", ev.Err)
			}
			evs = append(evs, ev)
			if done(ev) && grace == nil {
				grace = time.After(10 * watchInterval)
			}
		case <-grace:
			return evs
		case <-timeout:
			e.t.Fatalf("watch: the expected event never came; got %+v", evs)
		}
	}
}

// onlyEvents fails when an event is not one the watch selects (want).
func (e *env) onlyEvents(evs []nameservice.Event, want func(nameservice.Event) bool) {
	e.t.Helper()
	for _, ev := range evs {
		if !want(ev) {
			e.t.Fatalf("the watch reported %+v, which it does not select (events %+v)", ev, evs)
		}
	}
}

// checkChain checks the events for concern c: each starts where the last
// ended, watermarks only rise, and the last reaches to. A driver whose feed
// is exact (driver.ExactWatcher) must also report every step: from, from+1,
// ..., to.
func (e *env) checkChain(evs []nameservice.Event, c nameservice.Concern, from, to int64) {
	e.t.Helper()
	var feed driver.ExactWatcher
	exact := e.ns.As(&feed)
	prev := from
	for _, ev := range evs {
		if ev.Concern != c {
			continue
		}
		if ev.Old != prev || ev.New.V <= prev {
			e.t.Fatalf("event %d -> %d does not follow %d (events %+v)", ev.Old, ev.New.V, prev, evs)
		}
		if exact && ev.New.V != prev+1 {
			e.t.Fatalf("exact watch skipped from %d to %d", prev, ev.New.V)
		}
		prev = ev.New.V
	}
	if prev != to {
		e.t.Fatalf("last %s event at %d, want %d", c, prev, to)
	}
}
