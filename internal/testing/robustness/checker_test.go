package robustness

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/anishathalye/porcupine"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/mem"
	"nameservice.dev/nameservice/model"
)

func ref(addr string, t int64) model.Value { return model.RefValue(addr, t) }

func ledger(head model.Value) *model.Record {
	r := model.NewLedger(model.ID{}, 0)
	r.Head = &head
	return r
}

// history builds a history of hand-written events.
func history(events ...Event) *History {
	return &History{events: events}
}

func check(h *History) porcupine.CheckResult {
	return porcupine.CheckOperationsTimeout(nsModel, h.Operations(), checkTimeout)
}

func TestModelHandWritten(t *testing.T) {
	create := Event{Client: 0, In: Input{Kind: Create, ID: "x"}, Out: Output{Applied: true}, Call: 0, Return: 1}
	publish := func(t int64, out Output, call, ret int64) Event {
		return Event{Client: 1, In: Input{Kind: PublishCommit, ID: "x", Concern: model.Head, Next: ref("a", t)}, Out: out, Call: call, Return: ret}
	}
	purge := func(out Output, call, ret int64) Event {
		return Event{Client: 3, In: Input{Kind: Purge, ID: "x"}, Out: out, Call: call, Return: ret}
	}
	read := func(head model.Value, call, ret int64) Event {
		return Event{Client: 2, In: Input{Kind: Lookup, ID: "x"}, Out: Output{Record: ledger(head)}, Call: call, Return: ret}
	}
	cases := []struct {
		name string
		h    *History
		want porcupine.CheckResult
	}{
		{"read after write", history(create, publish(1, Output{Applied: true, Current: ref("a", 1)}, 2, 3), read(ref("a", 1), 4, 5)), porcupine.Ok},
		{"stale read after write", history(create, publish(1, Output{Applied: true, Current: ref("a", 1)}, 2, 3), read(model.UnbornValue(), 4, 5)), porcupine.Illegal},
		{"concurrent read may see either", history(create, publish(1, Output{Applied: true, Current: ref("a", 1)}, 2, 5), read(model.UnbornValue(), 3, 4)), porcupine.Ok},
		{"stale publish must carry the current head", history(create,
			publish(2, Output{Applied: true, Current: ref("a", 2)}, 2, 3),
			publish(1, Output{Current: model.UnbornValue()}, 4, 5)), porcupine.Illegal},
		{"a conflict for a write that landed", history(create,
			publish(1, Output{Current: model.UnbornValue()}, 2, 3), read(ref("a", 1), 4, 5)), porcupine.Illegal},
		{"an unknown outcome may have landed", history(create,
			publish(1, Output{Unknown: true}, 2, 3), read(ref("a", 1), 4, 5)), porcupine.Ok},
		{"an unknown outcome may not have landed", history(create,
			publish(1, Output{Unknown: true}, 2, 3), read(model.UnbornValue(), 4, 5)), porcupine.Ok},
		{"update before create", history(publish(1, Output{NotFound: true}, 0, 1), create), porcupine.Ok},
		{"not found after create", history(create, publish(1, Output{NotFound: true}, 2, 3)), porcupine.Illegal},
		{"not found after purge", history(create, purge(Output{Applied: true}, 2, 3), publish(1, Output{NotFound: true}, 4, 5)), porcupine.Ok},
		{"a write applied after purge", history(create, purge(Output{Applied: true}, 2, 3),
			publish(1, Output{Applied: true, Current: ref("a", 1)}, 4, 5)), porcupine.Illegal},
		{"a read after purge", history(create, purge(Output{Applied: true}, 2, 3), read(model.UnbornValue(), 4, 5)), porcupine.Illegal},
		{"a second purge", history(create, purge(Output{Applied: true}, 2, 3), purge(Output{Applied: true}, 4, 5)), porcupine.Illegal},
		{"a purge of nothing", history(purge(Output{NotFound: true}, 0, 1), create), porcupine.Ok},
		{"re-create after purge starts anew", history(create, publish(1, Output{Applied: true, Current: ref("a", 1)}, 2, 3),
			purge(Output{Applied: true}, 4, 5), Event{Client: 0, In: Input{Kind: Create, ID: "x"}, Out: Output{Applied: true}, Call: 6, Return: 7},
			read(ref("a", 1), 8, 9)), porcupine.Illegal},
	}
	for _, c := range cases {
		if got := check(c.h); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// broken wraps a memory driver and breaks one promise in a share of calls.
type broken struct {
	driver.Driver
	how  string
	mu   sync.Mutex
	rnd  *rand.Rand
	last map[model.ID]*model.Record
}

func (b *broken) now() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.rnd.IntN(5) == 0
}

// Get returns, when stale, the record this client read before.
func (b *broken) Get(ctx context.Context, id model.ID) (*model.Record, error) {
	rec, err := b.Driver.Get(ctx, id)
	if b.how != "stale read" || err != nil {
		return rec, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	old := b.last[id]
	b.last[id] = rec.Clone()
	if old != nil && b.rnd.IntN(3) == 0 {
		return old, nil
	}
	return rec, nil
}

func (b *broken) Update(ctx context.Context, id model.ID, c model.Concern, cond driver.Condition, next model.Value) (driver.Outcome, error) {
	switch {
	case b.how == "lost write" && b.now():
		cur, err := b.Driver.Get(ctx, id)
		if err != nil || !cond.Holds(*cur.Value(c), next) {
			break
		}
		return driver.Outcome{Applied: true, Current: next}, nil
	case b.how == "conflict for a landed write" && b.now():
		cur, err := b.Driver.Get(ctx, id)
		if err != nil {
			break
		}
		out, err := b.Driver.Update(ctx, id, c, cond, next)
		if out.Applied {
			return driver.Outcome{Current: *cur.Value(c)}, err
		}
		return out, err
	case b.how == "error for a write that did not land" && b.now():
		return driver.Outcome{}, errors.New("injected: lost")
	}
	return b.Driver.Update(ctx, id, c, cond, next)
}

// Delete, when broken, reports a purge it did not do.
func (b *broken) Delete(ctx context.Context, id model.ID) error {
	if b.how == "purge that left the record" && !b.now() { // most purges: they are few
		if _, err := b.Driver.Get(ctx, id); err != nil {
			return err
		}
		return nil
	}
	return b.Driver.Delete(ctx, id)
}

// TestCheckerCatchesBrokenDrivers runs the workload on drivers that break
// one promise each: the check must reject every one of them, except an
// error for a write that did not happen, which is allowed.
func TestCheckerCatchesBrokenDrivers(t *testing.T) {
	for _, how := range []string{"stale read", "lost write", "conflict for a landed write", "error for a write that did not land",
		"purge that left the record"} {
		t.Run(how, func(t *testing.T) {
			store := mem.NewStore()
			var n uint64
			open := func(context.Context) (driver.Driver, error) {
				n++
				return &broken{Driver: store.Open(), how: how, rnd: rand.New(rand.NewPCG(n, 7)), last: map[model.ID]*model.Record{}}, nil
			}
			h, err := Run(context.Background(), open, workload(5))
			if err != nil {
				t.Fatal(err)
			}
			got := check(h)
			want := porcupine.Illegal
			if how == "error for a write that did not land" {
				want = porcupine.Ok
			}
			if got != want {
				t.Errorf("check says %s, want %s (%s)", got, want, h.Stats())
			}
		})
	}
}

// TestArtifacts: a failing history is written where Check writes it, as
// text naming the sub-history that fails and every operation with the
// concerns it writes, and as porcupine's visualisation.
func TestArtifacts(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(ArtifactsEnv, dir)
	h := history(
		Event{In: Input{Kind: Create, ID: "x"}, Out: Output{Applied: true}, Call: 0, Return: 1},
		Event{Client: 1, In: Input{Kind: PushConfig, ID: "x", Concern: model.Config, Expected: &model.Value{}, Next: model.Value{V: 1, Payload: model.Object{"k": "v"}}},
			Out: Output{Current: model.Value{}}, Call: 2, Return: 3},
		Event{Client: 2, In: Input{Kind: Lookup, ID: "x"}, Out: Output{Record: model.NewLedger(model.ID{}, 0)}, Call: 4, Return: 5},
		Event{Client: 3, In: Input{Kind: Purge, ID: "x"}, Out: Output{Applied: true}, Call: 6, Return: 7},
	)
	h.events[2].Out.Record.Config = &model.Value{V: 1, Payload: model.Object{"k": "v"}}
	ops := h.Operations()
	res, info := porcupine.CheckOperationsVerbose(nsModel, ops, checkTimeout)
	if res != porcupine.Illegal {
		t.Fatalf("check says %s, want Illegal", res)
	}
	parts := illegalParts(ops, 10)
	for _, want := range []string{"sub-history x config (4 operations; the first 2 are not linearizable already)", "x create by init (every concern) = created"} {
		if !strings.Contains(parts, want) {
			t.Errorf("the failing sub-histories do not say %q:\n%s", want, parts)
		}
	}
	files, err := writeArtifacts(t.Name(), h, parts, info)
	if err != nil {
		t.Fatal(err)
	}
	wants := [][]string{{"x purge (every concern) = purged", "x lookup = head v0 (unborn), index v0 (unborn), status v1"}, {"<html"}}
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil || filepath.Dir(f) != dir {
			t.Fatalf("%s (%v) is not in %s", f, err, dir)
		}
		for _, want := range wants[i] {
			if !strings.Contains(string(b), want) {
				t.Errorf("%s does not say %q:\n%.2000s", f, want, b)
			}
		}
	}
}

// TestUnseenUnknownWritesLeftOut: an update with an unknown outcome whose
// value nobody saw is left out of the check; one whose value a read saw
// stays, and the history stays linearizable.
func TestUnseenUnknownWritesLeftOut(t *testing.T) {
	publish := func(client int, addr string, t int64, call int64) Event {
		return Event{Client: client, In: Input{Kind: PublishCommit, ID: "x", Concern: model.Head, Next: ref(addr, t)}, Out: Output{Unknown: true}, Call: call, Return: call + 1}
	}
	h := history(
		Event{In: Input{Kind: Create, ID: "x"}, Out: Output{Applied: true}, Call: 0, Return: 1},
		publish(1, "seen", 1, 2),
		publish(2, "unseen", 2, 4),
		Event{Client: 3, In: Input{Kind: Lookup, ID: "x"}, Out: Output{Record: ledger(ref("seen", 1))}, Call: 6, Return: 7},
	)
	var kept []string
	for _, o := range h.Operations() {
		if in := o.Input.(op).in; in.Kind == PublishCommit {
			kept = append(kept, in.Next.Payload.String("address"))
		}
	}
	if len(kept) != 1 || kept[0] != "seen" {
		t.Errorf("updates kept: %v, want [seen]", kept)
	}
	if got := check(h); got != porcupine.Ok {
		t.Errorf("check says %s, want Ok", got)
	}
}
