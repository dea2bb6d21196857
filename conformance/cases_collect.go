package conformance

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
)

var groupCollect = optional(has[driver.Collector], func(e *env) error {
	_, err := e.ns.Collect(e.ctx, nameservice.CollectOptions{Prefix: e.prefix})
	return err
}, group{name: "Collect", guarantee: "collection: a collector removes what purges left once old enough, and never harms a live, re-created or contended record", alone: true, cases: []testCase{
	{name: "RemovesOnlyOldPurges", quick: true, run: collectOldPurges},
	{name: "DryRunRemovesNothing", run: collectDryRun},
	{name: "SparesRecreated", run: collectSparesRecreated},
	{name: "RacingWriters", run: collectRacingWriters},
}})

// collect runs Collect under the test's prefix and returns what it did,
// and the objects it reported that belong to a record (those with an ID).
func (e *env) collect(ns *nameservice.NameService, olderThan time.Duration, dryRun bool) (driver.CollectStats, []driver.Collected) {
	e.t.Helper()
	var recs []driver.Collected
	st, err := ns.Collect(e.ctx, nameservice.CollectOptions{Prefix: e.prefix, OlderThan: olderThan, DryRun: dryRun,
		Report: func(o driver.Collected) {
			if o.ID != "" {
				recs = append(recs, o)
			}
		}})
	e.must(err)
	return st, recs
}

// pushed creates name with head at t and returns the record.
func (e *env) pushed(name string, t int64) *nameservice.Record {
	e.t.Helper()
	e.init(name)
	e.applied(ref(fmt.Sprintf("fluree:file://%s/%d", name, t), t))(e.ns.PublishCommit(e.ctx, e.id(name), t, fmt.Sprintf("fluree:file://%s/%d", name, t)))
	return e.lookup(name)
}

func collectOldPurges(e *env) {
	live := e.pushed("live", 3)
	e.pushed("gone", 2)
	e.must(e.ns.Purge(e.ctx, e.id("gone")))
	_, young := e.collect(e.ns, time.Hour, false)
	for _, o := range young {
		if o.Removed || o.ID != e.ids("gone")[0] {
			e.t.Fatalf("with OlderThan 1h a purge a moment old was collected, or a live record reported: %+v", o)
		}
	}
	e.collect(e.ns, 0, false)
	if st, _ := e.collect(e.ns, 0, false); st != (driver.CollectStats{}) {
		e.t.Fatalf("a second collection found more: %+v (the first left the purge's objects or reported the live record)", st)
	}
	e.wantSame("live", live)
	e.wantAbsent("gone")
	e.pushed("gone", 1)
}

func collectDryRun(e *env) {
	for _, n := range []string{"a", "b"} {
		e.pushed(n, 1)
		e.must(e.ns.Purge(e.ctx, e.id(n)))
	}
	_, dry := e.collect(e.ns, 0, true)
	if _, real := e.collect(e.ns, 0, false); !slices.Equal(removedObjects(dry), removedObjects(real)) {
		e.t.Fatalf("dry run said it would do %+v, the real run did %+v", dry, real)
	}
}

// removedObjects returns the objects of l that were removed, sorted.
func removedObjects(l []driver.Collected) []string {
	var out []string
	for _, o := range l {
		if o.Removed {
			out = append(out, o.Object)
		}
	}
	slices.Sort(out)
	return out
}

func collectSparesRecreated(e *env) {
	e.pushed("db", 5)
	e.must(e.ns.Purge(e.ctx, e.id("db")))
	again := e.pushed("db", 1)
	e.collect(e.ns, 0, false)
	e.wantSame("db", again)
	e.applied(ref("fluree:file://db/2", 2))(e.ns.PublishCommit(e.ctx, e.id("db"), 2, "fluree:file://db/2"))
}

// collectRacingWriters: writers create, push, check and purge in a loop
// while a collector keeps collecting: every step of every writer must
// succeed as if it were alone. A collection may fail as unavailable (a
// store slow to answer on a loaded machine).
func collectRacingWriters(e *env) {
	c := e.client()
	const writers, rounds = 4, 15
	var stop atomic.Bool
	var wg sync.WaitGroup
	var collectErr error // read once the collector has ended
	wg.Go(func() {
		for !stop.Load() && collectErr == nil {
			_, collectErr = c.Collect(e.ctx, nameservice.CollectOptions{Prefix: e.prefix})
			if errors.Is(collectErr, nameservice.ErrUnavailable) {
				collectErr = nil
			}
		}
	})
	errs := make([]error, writers)
	runParallel(e, writers, func(w int, ns *nameservice.NameService) {
		errs[w] = writeRounds(e, ns, e.id(fmt.Sprintf("w%d", w)), rounds)
	})
	stop.Store(true)
	wg.Wait()
	if collectErr != nil {
		e.t.Fatalf("collector: %v", collectErr)
	}
	e.must(errors.Join(errs...))
}

// writeRounds creates, pushes, checks and purges id, rounds times.
func writeRounds(e *env, ns *nameservice.NameService, id string, rounds int) error {
	for r := range rounds {
		if err := ns.Init(e.ctx, id); err != nil {
			return fmt.Errorf("round %d: init: %w", r, err)
		}
		for t := int64(1); t <= 3; t++ {
			out, err := ns.PublishCommit(e.ctx, id, t, fmt.Sprintf("fluree:file://%d/%d", r, t))
			if err != nil || !out.Applied {
				return fmt.Errorf("round %d: push t=%d: applied %v, current %v, err %v", r, t, out.Applied, out.Current, err)
			}
		}
		if rec, err := ns.Lookup(e.ctx, id); err != nil || rec.Head.V != 3 {
			return fmt.Errorf("round %d: lookup after pushes: %v, %v", r, rec, err)
		}
		if err := ns.Purge(e.ctx, id); err != nil {
			return fmt.Errorf("round %d: purge: %w", r, err)
		}
	}
	return nil
}
