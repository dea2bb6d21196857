package conformance

import (
	"context"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/subscribe"
)

var groupSubscribe = group{name: "Subscribe", guarantee: "subscriptions: every change seen once, resumable without loss", cases: []testCase{
	{name: "SeesEveryChangeOnce", quick: true, run: func(e *env) {
		e.init("db")
		sub, cancel := e.subscribe(nil)
		defer cancel()
		w := e.client()
		writing := make(chan struct{})
		defer func() { <-writing }()
		go func() {
			defer close(writing)
			for t := int64(1); t <= 8; t++ {
				e.applied(ref("c", t))(w.PublishCommit(e.ctx, e.id("db"), t, "c"))
				e.rejected(ref("c", t))(w.PublishCommit(e.ctx, e.id("db"), t, "again")) // a no-op: no event
			}
		}()
		evs := e.receive(sub, func(ev nameservice.Event) bool { return ev.Concern == nameservice.Head && ev.New.V == 8 })
		e.checkChain(evs, nameservice.Head, 0, 8)
		if got := sub.Map().Subscriptions[e.ids("db")[0]]; got.CommitT != 8 || got.StatusV != 1 || got.Kind != nameservice.Ledger {
			e.t.Fatalf("subscription map entry = %+v", got)
		}
	}},
	{name: "ResumeFromSavedMapLosesNothing", run: func(e *env) {
		e.init("db")
		e.graphSource("gs", nil)
		sub, cancel := e.subscribe(nil)
		for t := int64(1); t <= 3; t++ {
			e.applied(ref("c", t))(e.ns.PublishCommit(e.ctx, e.id("db"), t, "c"))
		}
		e.receive(sub, func(ev nameservice.Event) bool { return ev.Concern == nameservice.Head && ev.New.V == 3 })
		saved := sub.Map()
		cancel()

		// Changes while no one is subscribed.
		for t := int64(4); t <= 6; t++ {
			e.applied(ref("c", t))(e.ns.PublishCommit(e.ctx, e.id("db"), t, "c"))
		}
		cfg := config(1, nameservice.Object{"k": 1})
		e.applied(cfg)(e.ns.PushConfig(e.ctx, e.id("gs"), unborn, cfg))
		e.init("new")

		resumed, cancel2 := e.subscribe(&saved)
		defer cancel2()
		evs := e.receive(resumed, func(ev nameservice.Event) bool {
			return ev.ID.String() == e.ids("new")[0] && ev.Concern == nameservice.Status
		})
		want := map[string]int64{e.ids("db")[0] + " head": 6, e.ids("gs")[0] + " config": 1, e.ids("new")[0] + " status": 1}
		for _, ev := range evs {
			key := ev.ID.String() + " " + ev.Concern.String()
			if w, ok := saved.Subscriptions[ev.ID.String()]; ok && ev.Old < w.CommitT && ev.Concern == nameservice.Head {
				e.t.Fatalf("resumed event %s from %d is below the saved %d", key, ev.Old, w.CommitT)
			}
			if want[key] == ev.New.V {
				delete(want, key)
			}
		}
		if len(want) != 0 {
			e.t.Fatalf("resumed subscriber missed %v; got %+v", want, evs)
		}
		got := resumed.Map().Subscriptions
		if got[e.ids("db")[0]].CommitT != 6 || got[e.ids("gs")[0]].Kind != nameservice.GraphSource || got[e.ids("gs")[0]].ConfigV != 1 {
			e.t.Fatalf("resumed map = %+v", got)
		}
	}},
	{name: "ResumeReportsPurgedRecords", run: func(e *env) {
		e.init("db")
		sub, cancel := e.subscribe(nil)
		saved := sub.Map()
		cancel()
		e.must(e.ns.Purge(e.ctx, e.id("db")))
		resumed, cancel2 := e.subscribe(&saved)
		defer cancel2()
		evs := e.receive(resumed, func(ev nameservice.Event) bool { return ev.Deleted })
		if ev := evs[len(evs)-1]; ev.ID.String() != e.ids("db")[0] {
			e.t.Fatalf("deleted event for %s", ev.ID)
		}
		if _, ok := resumed.Map().Subscriptions[e.ids("db")[0]]; ok {
			e.t.Fatal("a purged record stays in the map")
		}
	}},
}}

func (e *env) subscribe(from *subscribe.Map) (*subscribe.Subscriber, context.CancelFunc) {
	e.t.Helper()
	ctx, cancel := context.WithCancel(e.ctx)
	sub, err := subscribe.Start(ctx, e.ns, subscribe.Options{Prefix: e.prefix, Interval: watchInterval, From: from})
	if err != nil {
		cancel()
		e.t.Fatalf("subscribe: %v", err)
	}
	return sub, cancel
}

// receive reads events until done reports the last one expected.
func (e *env) receive(sub *subscribe.Subscriber, done func(nameservice.Event) bool) []nameservice.Event {
	e.t.Helper()
	var evs []nameservice.Event
	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer cancel()
	for {
		ev, err := sub.Next(ctx)
		if err != nil {
			e.t.Fatalf("subscription: %v (the expected event never came; got %+v)", err, evs)
		}
		evs = append(evs, ev)
		if done(ev) {
			return evs
		}
	}
}
