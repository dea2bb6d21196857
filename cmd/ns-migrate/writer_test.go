package main

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/model"
)

// writer publishes commits up to maxT and pushes status and config up to
// maxV at the target, as a live transactor and admin would, recording what
// it applied.
type writer struct {
	ns         *nameservice.NameService
	id         string
	maxT, maxV int64
	applied    map[nameservice.Concern][]nameservice.Value
}

func (w *writer) run(t *testing.T) {
	ctx := context.Background()
	w.applied = map[nameservice.Concern][]nameservice.Value{}
	for i := int64(2); i <= w.maxT; i++ {
		out, err := w.ns.PublishCommit(ctx, w.id, i, fmt.Sprintf("fluree:file://commits/w%d", i))
		if err != nil {
			t.Errorf("writer: %v", err)
			return
		}
		if out.Applied {
			w.applied[nameservice.Head] = append(w.applied[nameservice.Head], out.Current)
		}
		if i%4 == 0 {
			w.push(t, nameservice.Status)
			w.push(t, nameservice.Config)
		}
		time.Sleep(100 * time.Microsecond) // let the copier in between
	}
}

// push moves concern c one step on by compare-and-set from what it reads,
// while it is below maxV.
func (w *writer) push(t *testing.T, c nameservice.Concern) {
	ctx := context.Background()
	rec, err := w.ns.Lookup(ctx, w.id)
	if err != nil {
		t.Errorf("writer: %v", err)
		return
	}
	cur := *rec.Value(c)
	if cur.V >= w.maxV {
		return
	}
	next := nameservice.Value{V: cur.V + 1, Payload: nameservice.Object{"state": "writer", "n": cur.V + 1}}
	push := w.ns.PushStatus
	if c == nameservice.Config {
		push = w.ns.PushConfig
	}
	out, err := push(ctx, w.id, cur, next)
	if err != nil {
		t.Errorf("writer: %v", err)
	}
	if out.Applied {
		w.applied[c] = append(w.applied[c], next)
	}
}

// TestWriterAtTargetNeverLosesAWrite advances a record at the target while
// a writer moves the same record there: afterwards each concern is the
// greater of the source's and the writer's last value, and every value the
// writer applied is either still there or was followed by a higher one.
func TestWriterAtTargetNeverLosesAWrite(t *testing.T) {
	for _, tc := range []struct {
		name       string
		maxT, maxV int64
	}{{"writer behind the source", 60, 6}, {"writer passes the source", 300, 30}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			src := newLedger(t, "live")
			src.Head, src.Index = ptr(ref(100, "c100")), ptr(ref(90, "i90"))
			src.Status = ptr(nameservice.StatusValue(10, "ready", nameservice.Object{"n": 10}))
			src.Config = ptr(config(10, "source"))
			dst := open(t, memURL(t, "dst"))
			behind := newLedger(t, "live")
			behind.Head = ptr(ref(1, "c1"))
			must(t, dst.Import(ctx, behind))

			w := &writer{ns: dst, id: "live", maxT: tc.maxT, maxV: tc.maxV}
			var wg sync.WaitGroup
			wg.Go(func() { w.run(t) })
			c := &copier{dst: dst}
			counts := map[action]int{}
			for range 100 {
				act, err := c.copyRecord(ctx, src, false)
				if act == actFailed {
					t.Fatalf("copy failed: %v", err)
				}
				counts[act]++
				time.Sleep(200 * time.Microsecond)
			}
			wg.Wait()
			act, _ := c.copyRecord(ctx, src, false)
			counts[act]++
			t.Logf("copy actions: %v; writer applied %d heads, %d statuses, %d configs", counts,
				len(w.applied[nameservice.Head]), len(w.applied[nameservice.Status]), len(w.applied[nameservice.Config]))

			final, err := dst.Lookup(ctx, "live")
			must(t, err)
			for _, con := range []nameservice.Concern{nameservice.Head, nameservice.Status, nameservice.Config} {
				want := *src.Value(con)
				if ws := w.applied[con]; len(ws) > 0 && ws[len(ws)-1].V > want.V {
					want = ws[len(ws)-1]
				}
				if got := *final.Value(con); !got.Equal(want) {
					t.Errorf("%s: target %s, want the greater of the source's and the writer's last: %s", con, got, want)
				}
			}
			if !final.Index.Equal(*src.Index) {
				t.Errorf("index: %s, want the source's %s", final.Index, src.Index)
			}
		})
	}
}

// racing wraps the target's driver so that, just before each write of the
// copier, the writer moves the same concern: every compare-and-set of the
// copier then starts from a stale value, the worst case.
type racing struct {
	driver.Driver
	before func(c model.Concern)
}

func (r *racing) Update(ctx context.Context, id model.ID, c model.Concern, cond driver.Condition, next model.Value) (driver.Outcome, error) {
	r.before(c)
	return r.Driver.Update(ctx, id, c, cond, next)
}

func TestWriterMovesBeforeEveryCopyWrite(t *testing.T) {
	ctx := context.Background()
	src := newLedger(t, "live")
	src.Head = ptr(ref(100, "c100"))
	src.Status = ptr(nameservice.StatusValue(10, "ready", nil))
	src.Config = ptr(config(10, "source"))
	dst := open(t, memURL(t, "dst"))
	start := newLedger(t, "live")
	start.Head = ptr(ref(1, "c1"))
	must(t, dst.Import(ctx, start))

	w := &writer{ns: dst, id: "live", maxV: 5, applied: map[nameservice.Concern][]nameservice.Value{}}
	var commitT int64 = 1
	moves := map[model.Concern]int{}
	race := &racing{Driver: rawDriver(t, dst), before: func(c model.Concern) {
		if moves[c]++; moves[c] > 2 {
			return // then let the copier through
		}
		switch c {
		case model.Head:
			commitT += 10
			if _, err := dst.PublishCommit(ctx, "live", commitT, fmt.Sprintf("fluree:file://commits/w%d", commitT)); err != nil {
				t.Errorf("writer: %v", err)
			}
		default:
			w.push(t, c)
		}
	}}
	c := &copier{dst: nameservice.New(race)}
	act, err := c.copyRecord(ctx, src, false)
	if act != actAdvance || err != nil {
		t.Fatalf("copy: %s, %v; want advance", act, err)
	}
	final, err := dst.Lookup(ctx, "live")
	must(t, err)
	if got, want := recordJSON(t, final), recordJSON(t, src); got != want {
		t.Fatalf("target %s\nwant the source %s", got, want)
	}
	if moves[model.Head] < 3 || len(w.applied[nameservice.Status]) == 0 || len(w.applied[nameservice.Config]) == 0 {
		t.Fatalf("the writer did not get in the way (%d moves, applied %v)", moves, w.applied)
	}
}

// TestWriterAheadWins: when the writer moves a concern past the source
// between the copier's read and its write, the copier reports a conflict and
// the writer's value stands.
func TestWriterAheadWins(t *testing.T) {
	ctx := context.Background()
	src := newLedger(t, "live")
	src.Status = ptr(nameservice.StatusValue(3, "ready", nil))
	dst := open(t, memURL(t, "dst"))
	must(t, dst.Import(ctx, newLedger(t, "live")))
	w := &writer{ns: dst, id: "live", maxV: 9, applied: map[nameservice.Concern][]nameservice.Value{}}
	race := &racing{Driver: rawDriver(t, dst), before: func(c model.Concern) {
		for range 8 {
			w.push(t, c)
		}
	}}
	c := &copier{dst: nameservice.New(race)}
	act, err := c.copyRecord(ctx, src, false)
	if act != actConflict || err == nil {
		t.Fatalf("copy: %s, %v; want a conflict", act, err)
	}
	got, err := dst.StatusOf(ctx, "live")
	must(t, err)
	if ws := w.applied[nameservice.Status]; !got.Equal(ws[len(ws)-1]) || got.V != 9 {
		t.Fatalf("status %s, want the writer's last %s", got, ws[len(ws)-1])
	}
}

// rawDriver returns the driver under ns, for a test that wraps it.
func rawDriver(t *testing.T, ns *nameservice.NameService) driver.Driver {
	t.Helper()
	var d driver.Driver
	if !ns.As(&d) {
		t.Fatal("As(*driver.Driver) = false")
	}
	return d
}
