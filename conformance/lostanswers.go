package conformance

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/model"
)

// LossyOpener opens a client of a store that calls lose once the store has
// applied a write, before the client gets the answer; when lose returns
// true the client gets an answer that says nothing (a 500, a reset), as
// when a broken connection loses the answer of a write that landed. Other
// clients' writes go through while lose runs.
type LossyOpener func(ctx context.Context, lose func() bool) (driver.Driver, error)

// AnswerLoser prepares stores whose answers a test can lose (a fault proxy
// before a real server, or before ns serve).
type AnswerLoser interface {
	// NewLossyStore is Harness.NewStore, returning the opener of its plain
	// clients and of its lossy ones.
	NewLossyStore(ctx context.Context, t *testing.T) (Opener, LossyOpener, error)
}

// LossyHarnessFunc adapts a function to AnswerLoser.
type LossyHarnessFunc func(ctx context.Context, t *testing.T) (Opener, LossyOpener, error)

// NewLossyStore calls f.
func (f LossyHarnessFunc) NewLossyStore(ctx context.Context, t *testing.T) (Opener, LossyOpener, error) {
	return f(ctx, t)
}

// RunLostAnswers checks that a write whose answer is lost lands once, on the
// record it was meant for, and is never misreported, while another client
// purges the record, and perhaps creates it again. For every write, by a
// client that read the record before and by one that never did, the answer
// is lost:
//
//   - with nothing else happening: the write is reported done;
//   - while another client purges the record: done, or ErrOutcomeUnknown;
//     the record stays purged;
//   - while another client purges and creates it again: done, or
//     ErrOutcomeUnknown; the new record is exactly as its creator made it.
//
// Never a conflict, ErrNotFound or ErrAlreadyExists for a write that
// landed, and never the write applied a second time.
func RunLostAnswers(t *testing.T, h AnswerLoser) {
	t.Helper()
	for _, w := range lostWrites {
		t.Run(w.name, func(t *testing.T) {
			for _, world := range lossWorlds {
				for _, client := range []string{"warm", "cold"} {
					t.Run(world.name+"/"+client, func(t *testing.T) { runLost(t, h, w, world, client == "warm") })
				}
			}
		})
	}
}

// lostWrite is one write whose answer a case loses: setup prepares the
// record with the plain client, run makes the write with the lossy one and
// reports whether it was done (nil: applied, created, purged, retracted).
type lostWrite struct {
	name  string
	setup func(e *env, ns *nameservice.NameService, id string)
	run   func(ctx context.Context, ns *nameservice.NameService, id string) error
	gone  bool // the write removes the record (a purge)
}

// applied turns a push's answer into run's: a push not applied is an error.
func applied(out nameservice.Outcome, err error) error {
	if err == nil && !out.Applied {
		return fmt.Errorf("not applied, current %v", out.Current)
	}
	return err
}

func initRecord(e *env, ns *nameservice.NameService, id string) { e.must(ns.Init(e.ctx, id)) }

var lostWrites = []lostWrite{
	{name: "Publish", setup: initRecord, run: func(ctx context.Context, ns *nameservice.NameService, id string) error {
		return applied(ns.PublishCommit(ctx, id, 2, "c2"))
	}},
	{name: "CompareAndSetFromBorn", setup: func(e *env, ns *nameservice.NameService, id string) {
		initRecord(e, ns, id)
		e.must(applied(ns.PublishCommit(e.ctx, id, 1, "c1")))
	}, run: func(ctx context.Context, ns *nameservice.NameService, id string) error {
		exp := ref("c1", 1)
		return applied(ns.CompareAndSetRef(ctx, id, nameservice.Head, &exp, nameservice.Ref{Address: "c2", T: 2}))
	}},
	{name: "CompareAndSetFromUnborn", setup: initRecord, run: func(ctx context.Context, ns *nameservice.NameService, id string) error {
		return applied(ns.CompareAndSetRef(ctx, id, nameservice.Head, &unborn, nameservice.Ref{Address: "c1", T: 1}))
	}},
	{name: "PushStatus", setup: initRecord, run: func(ctx context.Context, ns *nameservice.NameService, id string) error {
		return applied(ns.PushStatus(ctx, id, ready, status(2, "indexing", nil)))
	}},
	{name: "PushConfig", setup: initRecord, run: func(ctx context.Context, ns *nameservice.NameService, id string) error {
		return applied(ns.PushConfig(ctx, id, unborn, config(1, nameservice.Object{"k": "v"})))
	}},
	{name: "Retract", setup: initRecord, run: func(ctx context.Context, ns *nameservice.NameService, id string) error {
		return ns.Retract(ctx, id)
	}},
	{name: "Purge", setup: initRecord, gone: true, run: func(ctx context.Context, ns *nameservice.NameService, id string) error {
		return ns.Purge(ctx, id)
	}},
	{name: "Create", setup: func(*env, *nameservice.NameService, string) {}, run: func(ctx context.Context, ns *nameservice.NameService, id string) error {
		return ns.Init(ctx, id)
	}},
}

// lossWorld is what another client does while the lossy client waits for
// the answer it will not get.
type lossWorld struct {
	name      string
	act       func(ctx context.Context, ns *nameservice.NameService, id string)
	purged    bool // the record is purged and not created again
	recreated bool // the record is purged and initialised again
}

var lossWorlds = []lossWorld{
	{name: "Alone", act: func(context.Context, *nameservice.NameService, string) {}},
	{name: "Purged", purged: true, act: func(ctx context.Context, ns *nameservice.NameService, id string) {
		_ = ns.Purge(ctx, id) // not found when the lost write was a purge
	}},
	{name: "PurgedAndCreated", recreated: true, act: func(ctx context.Context, ns *nameservice.NameService, id string) {
		_ = ns.Purge(ctx, id)
		_ = ns.Init(ctx, id)
	}},
}

func runLost(t *testing.T, h AnswerLoser, w lostWrite, world lossWorld, warm bool) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	open, lossy, err := h.NewLossyStore(ctx, t)
	if err != nil {
		t.Fatalf("harness: new lossy store: %v", err)
	}
	e := newEnv(ctx, t, open, nil, "la"+randomHex(6)+"/")
	id := e.id("db")
	w.setup(e, e.ns, id)

	var once sync.Once // a resend's answer arrives
	var landed atomic.Bool
	d, err := lossy(ctx, func() (lost bool) {
		landed.Store(true)
		once.Do(func() {
			world.act(ctx, e.ns, id)
			lost = true
		})
		return lost
	})
	if err != nil {
		t.Fatalf("harness: open lossy client: %v", err)
	}
	a := nameservice.New(d, nameservice.WithClock(func() time.Time { return clock }))
	defer a.Close()
	if warm {
		if _, err := a.Lookup(ctx, id); err != nil && !errors.Is(err, nameservice.ErrNotFound) {
			t.Fatalf("lookup before the write: %v", err)
		}
	}
	err = w.run(ctx, a, id)
	if !landed.Load() {
		t.Fatalf("no write of %s reached the store (answer: %v)", w.name, err)
	}
	checkLost(e, w, world, id, err)
}

// checkLost judges the write's answer err and the record left behind.
func checkLost(e *env, w lostWrite, world lossWorld, id string, err error) {
	e.t.Helper()
	unknown := errors.Is(err, nameservice.ErrOutcomeUnknown)
	switch {
	case err != nil && !unknown:
		e.t.Fatalf("%s whose answer was lost (%s) = %v; want done or outcome unknown, never a misreport", w.name, world.name, err)
	case unknown && world.name == "Alone":
		e.t.Fatalf("%s whose answer was lost with nothing else happening = %v; want done: the store holds what proves it", w.name, err)
	}
	rec, lerr := e.ns.Lookup(e.ctx, id)
	switch {
	case world.purged || (w.gone && !world.recreated):
		if !errors.Is(lerr, nameservice.ErrNotFound) {
			e.t.Fatalf("after %s and a purge: lookup = %s, %v; want not found: the write landed again", w.name, describe(rec), lerr)
		}
	case world.recreated:
		e.must(lerr)
		if fresh := model.NewLedger(rec.ID, clock.Unix()); !recordsMatch(rec, fresh) {
			e.t.Fatalf("after %s whose answer was lost, the record purged and created again:\n got %s\nwant %s (as its creator made it): the write landed on the new record",
				w.name, describe(rec), describe(fresh))
		}
	}
}

// recordsMatch compares what a lost write could change.
func recordsMatch(a, b *nameservice.Record) bool {
	if a.Retracted != b.Retracted {
		return false
	}
	for _, c := range model.Concerns {
		if va, vb := a.Value(c), b.Value(c); (va == nil) != (vb == nil) || va != nil && !va.Equal(*vb) {
			return false
		}
	}
	return true
}

// describe prints what recordsMatch compares.
func describe(r *nameservice.Record) string {
	if r == nil {
		return "none"
	}
	s := fmt.Sprintf("retracted %v", r.Retracted)
	for _, c := range model.Concerns {
		if v := r.Value(c); v != nil {
			s += fmt.Sprintf(", %s %v", c, *v)
		}
	}
	return s
}
