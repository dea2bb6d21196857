package objstore_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/conformance"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/objstore"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// errLostAnswer is what a lossyStore answers for a write whose answer it
// loses.
var errLostAnswer = errors.New("lossy: the answer was lost")

// lossyStore is one client's view of a memStore whose writes' answers can
// be lost: fault is asked about each Put, before and after it is applied.
type lossyStore struct {
	*memStore
	// fault returns whether to lose the answer of the Put of key, before
	// the store applies it (applied false: it never lands) or after.
	fault func(key string, applied bool) bool
}

func (s *lossyStore) Put(ctx context.Context, key string, data []byte, pc objstore.Precondition) (string, error) {
	if s.fault(key, false) {
		return "", fmt.Errorf("put %s: %w", key, errLostAnswer)
	}
	tag, err := s.memStore.Put(ctx, key, data, pc)
	if err == nil && s.fault(key, true) {
		return "", fmt.Errorf("put %s: %w", key, errLostAnswer)
	}
	return tag, err
}

func (*lossyStore) MaybeApplied(err error) bool { return errors.Is(err, errLostAnswer) }

// lossyHarness serves RunLostAnswers over one memStore.
func lossyHarness(l jsonld.Layout) conformance.AnswerLoser {
	return conformance.LossyHarnessFunc(func(context.Context, *testing.T) (conformance.Opener, conformance.LossyOpener, error) {
		st := newMemStore()
		open := func(context.Context) (driver.Driver, error) {
			return memDriver{objstore.New(st, objstore.Config{Name: "mem", Layout: l})}, nil
		}
		lossy := func(_ context.Context, lose func() bool) (driver.Driver, error) {
			ls := &lossyStore{memStore: st, fault: func(_ string, applied bool) bool { return applied && lose() }}
			return memDriver{objstore.New(ls, objstore.Config{Name: "mem", Layout: l})}, nil
		}
		return open, lossy, nil
	})
}

// TestLostAnswers runs the lost-answer cases of the conformance suite over
// the store in memory.
func TestLostAnswers(t *testing.T) {
	for _, l := range []jsonld.Layout{jsonld.LayoutB, jsonld.LayoutC} {
		t.Run(l.String(), func(t *testing.T) { conformance.RunLostAnswers(t, lossyHarness(l)) })
	}
}

// lossEnv is a store in memory, a plain client and one whose writes' answers
// a test loses.
type lossEnv struct {
	t     *testing.T
	ctx   context.Context
	st    *memStore
	l     jsonld.Layout
	plain *nameservice.NameService
	r     *objstore.Records // the lossy client's
	lossy *nameservice.NameService
	mu    sync.Mutex
	fault func(key string, applied bool) bool
	puts  int // the lossy client's Puts
}

func newLossEnv(t *testing.T, l jsonld.Layout, cfg objstore.Config) *lossEnv {
	e := &lossEnv{t: t, ctx: context.Background(), st: newMemStore(), l: l}
	cfg.Name, cfg.Layout = "mem", l
	e.plain = nameservice.New(memDriver{objstore.New(e.st, cfg)})
	e.r = objstore.New(&lossyStore{memStore: e.st, fault: e.onPut}, cfg)
	e.lossy = nameservice.New(memDriver{e.r})
	return e
}

// onPut counts the lossy client's Puts and asks e.fault, under e.mu: the
// plain client's writes, which meanwhile makes, do not come here.
func (e *lossEnv) onPut(key string, applied bool) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !applied {
		e.puts++
	}
	return e.fault != nil && e.fault(key, applied)
}

// loseOnce loses the answer of the lossy client's next Put, after it is
// applied (before, when applied is false), and runs meanwhile while the
// client waits for it.
func (e *lossEnv) loseOnce(afterApply bool, meanwhile func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	done := false // guarded by e.mu, as e.fault runs
	e.fault = func(_ string, applied bool) bool {
		if done || applied != afterApply {
			return false
		}
		done = true
		if meanwhile != nil {
			meanwhile()
		}
		return true
	}
}

func (e *lossEnv) must(err error) {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
}

// purgeAndCollect purges id with the plain client and collects what the
// purge left at once, as `ns gc --older-than 0` would.
func (e *lossEnv) purgeAndCollect(id string) {
	e.must(e.plain.Purge(e.ctx, id))
	_, err := e.plain.Collect(e.ctx, nameservice.CollectOptions{})
	e.must(err)
}

// TestLostAnswerPurgedAndCollected loses the answer of a write that
// created a file (the index file, the record itself) while another client
// purges the record, a collector removes what the purge left, and perhaps
// the record is created again: the file it wrote is gone, which proves
// nothing, so the answer is outcome unknown, never a not found or a second
// write on the new record.
func TestLostAnswerPurgedAndCollected(t *testing.T) {
	writes := []struct {
		name string
		run  func(e *lossEnv) error
	}{
		{"IndexPush", func(e *lossEnv) error {
			_, err := e.lossy.PublishIndex(e.ctx, "db", 1, "i1")
			return err
		}},
		{"Create", func(e *lossEnv) error { return e.lossy.Init(e.ctx, "db2") }},
	}
	for _, l := range []jsonld.Layout{jsonld.LayoutB, jsonld.LayoutC} {
		for _, w := range writes {
			for _, again := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/createdAgain=%v", l, w.name, again), func(t *testing.T) {
					e := newLossEnv(t, l, objstore.Config{})
					e.must(e.plain.Init(e.ctx, "db"))
					id := "db"
					if w.name == "Create" {
						id = "db2"
					}
					e.loseOnce(true, func() {
						e.purgeAndCollect(id)
						if again {
							e.must(e.plain.Init(e.ctx, id))
						}
					})
					err := w.run(e)
					if !errors.Is(err, model.ErrOutcomeUnknown) {
						t.Fatalf("%s whose answer was lost while the record was purged and collected = %v; want outcome unknown", w.name, err)
					}
					rec, err := e.plain.Lookup(e.ctx, id)
					switch {
					case !again && !errors.Is(err, nameservice.ErrNotFound):
						t.Fatalf("lookup after the purge = %v, %v; want not found", rec, err)
					case again && err != nil:
						t.Fatal(err)
					case again && (rec.Index == nil || rec.Index.V != 0):
						t.Fatalf("the record created again has index %v; want unborn: the write landed on it", rec.Index)
					}
				})
			}
		}
	}
}

// TestLostAnswerNotLanded loses the answer of a write's first attempt
// before the store applies it, with nothing else happening: reading back
// shows the precondition still holds, so the write is sent again and
// lands once. A create is the exception: its file absent proves nothing
// (a purge and a collector could have removed it), so it is outcome
// unknown.
func TestLostAnswerNotLanded(t *testing.T) {
	for _, l := range []jsonld.Layout{jsonld.LayoutB, jsonld.LayoutC} {
		t.Run(l.String(), func(t *testing.T) {
			e := newLossEnv(t, l, objstore.Config{})
			e.must(e.plain.Init(e.ctx, "db"))
			check := func(what string, err error) {
				t.Helper()
				if err != nil {
					t.Fatalf("%s whose first answer was lost before it landed: %v; want done", what, err)
				}
			}
			e.loseOnce(false, nil)
			out, err := e.lossy.PublishCommit(e.ctx, "db", 1, "c1")
			check("publish", err)
			e.loseOnce(false, nil)
			_, err = e.lossy.PublishIndex(e.ctx, "db", 1, "i1")
			check("index push", err)
			e.loseOnce(false, nil)
			check("retract", e.lossy.Retract(e.ctx, "db"))
			rec, err := e.plain.Lookup(e.ctx, "db")
			e.must(err)
			if !out.Applied || rec.Head.V != 1 || rec.Index.V != 1 || !rec.Retracted || rec.Status.V != 2 {
				t.Fatalf("after the writes: applied %v, %+v; want head 1, index 1, retracted at status 2", out.Applied, rec)
			}
			e.loseOnce(false, nil)
			check("purge", e.lossy.Purge(e.ctx, "db"))
			if _, err := e.plain.Lookup(e.ctx, "db"); !errors.Is(err, nameservice.ErrNotFound) {
				t.Fatalf("lookup after the purge: %v", err)
			}
			e.loseOnce(false, nil)
			if err := e.lossy.Init(e.ctx, "db"); !errors.Is(err, model.ErrOutcomeUnknown) {
				t.Fatalf("create whose answer was lost before it landed = %v; want outcome unknown", err)
			}
		})
	}
}

// TestResend: a write marked as a resend (driver.Write.Resend), as ns
// serve sends a client's retry to a process that may not have seen the
// first attempt, writes nothing: it is done when the store holds its
// write (its entry, its token, its mark; a record retracted for a
// retract), and outcome unknown otherwise, whatever happened to the
// record since.
func TestResend(t *testing.T) {
	for _, l := range []jsonld.Layout{jsonld.LayoutB, jsonld.LayoutC} {
		t.Run(l.String(), func(t *testing.T) {
			e := newLossEnv(t, l, objstore.Config{})
			e.must(e.plain.Init(e.ctx, "db"))
			first := driver.Write{ID: driver.NewWriteID()}
			again := driver.WithWrite(e.ctx, driver.Write{ID: first.ID, Resend: true})
			_, err := e.plain.PublishCommit(driver.WithWrite(e.ctx, first), "db", 1, "c1")
			e.must(err)
			if out, err := e.lossy.PublishCommit(again, "db", 1, "c1"); err != nil || !out.Applied {
				t.Fatalf("resend of a publish that landed = %+v, %v; want applied", out, err)
			}
			other := driver.WithWrite(e.ctx, driver.Write{ID: driver.NewWriteID(), Resend: true})
			puts := e.puts
			if _, err := e.lossy.PublishCommit(other, "db", 2, "c2"); !errors.Is(err, model.ErrOutcomeUnknown) {
				t.Fatalf("resend of a publish that never landed = %v; want outcome unknown", err)
			}
			if err := e.lossy.Retract(other, "db"); !errors.Is(err, model.ErrOutcomeUnknown) {
				t.Fatalf("resend of a retract that never landed = %v; want outcome unknown", err)
			}
			if err := e.lossy.Purge(other, "db"); !errors.Is(err, model.ErrOutcomeUnknown) {
				t.Fatalf("resend of a purge that never landed = %v; want outcome unknown", err)
			}
			if e.puts != puts {
				t.Fatalf("resends without proof wrote %d times", e.puts-puts)
			}
			e.must(e.plain.Retract(e.ctx, "db"))
			e.must(e.lossy.Retract(other, "db")) // retracted: nothing left to do
			e.must(e.plain.Purge(driver.WithWrite(e.ctx, first), "db"))
			e.must(e.lossy.Purge(again, "db"))
			if err := e.lossy.Purge(other, "db"); !errors.Is(err, model.ErrOutcomeUnknown) {
				t.Fatalf("resend of a purge after another purged the record = %v; want outcome unknown", err)
			}
			create := driver.Write{ID: driver.NewWriteID()}
			e.must(e.plain.Init(driver.WithWrite(e.ctx, create), "db"))
			e.must(e.lossy.Init(driver.WithWrite(e.ctx, driver.Write{ID: create.ID, Resend: true}), "db"))
			if err := e.lossy.Init(other, "db"); !errors.Is(err, model.ErrOutcomeUnknown) {
				t.Fatalf("resend of a create of a record another created = %v; want outcome unknown", err)
			}
			// Done where a sealed file still holds it (layout C's head
			// file), unknown where the purge's mark replaced it.
			puts = e.puts
			if _, err := e.lossy.PublishCommit(again, "db", 1, "c1"); err != nil && !errors.Is(err, model.ErrOutcomeUnknown) {
				t.Fatalf("resend of a publish that landed on a record purged since = %v; want done or outcome unknown", err)
			}
			if rec, err := e.plain.Lookup(e.ctx, "db"); err != nil || rec.Head.V != 0 || e.puts != puts {
				t.Fatalf("after a resend of a publish that landed on a record purged since: %v, %v, %d writes; want the new record untouched", rec, err, e.puts-puts)
			}
			e.must(e.plain.Purge(e.ctx, "db"))
			e.must(e.lossy.Init(driver.WithWrite(e.ctx, driver.Write{ID: create.ID, Resend: true}), "db"))
		})
	}
}

// TestLostAnswerContentTags: on a store whose tags are digests of the
// bytes (S3's ETags), a tag that names bytes written by Fluree (no token,
// no entries) can come back after other writes, so it proves nothing: a
// write over such a file whose answer is lost before it lands is outcome
// unknown there, and sent again where tags name one version for good.
func TestLostAnswerContentTags(t *testing.T) {
	fluree := `{"@context":{"f":"https://ns.flur.ee/db#"},"@id":"db:main","@type":["f:LedgerSource"],` +
		`"f:ledger":{"@id":"db"},"f:branch":"main","f:t":0,"f:status":"ready"}`
	for _, unique := range []bool{false, true} {
		t.Run(fmt.Sprintf("UniqueTags=%v", unique), func(t *testing.T) {
			e := newLossEnv(t, jsonld.LayoutB, objstore.Config{UniqueTags: unique})
			_, err := e.st.Put(e.ctx, "ns@v2/db/main.json", []byte(fluree), objstore.Precondition{})
			e.must(err)
			e.loseOnce(false, nil)
			_, err = e.lossy.PublishCommit(e.ctx, "db", 1, "c1")
			switch {
			case unique && err != nil:
				t.Fatalf("publish over Fluree's file, answer lost before it landed, unique tags = %v; want done", err)
			case !unique && !errors.Is(err, model.ErrOutcomeUnknown):
				t.Fatalf("publish over Fluree's file, answer lost before it landed, content tags = %v; want outcome unknown", err)
			}
		})
	}
}

// TestStaleDefiningFile: a client whose cache still holds the defining
// file of a record purged since learns the new record's index file from
// a resend it settles, then pushes the index. The pair it holds is of two
// records: the push must re-read, not write the index file with the
// purged record's token (which would make the new record's index read as
// debris, unborn, after a push that landed).
func TestStaleDefiningFile(t *testing.T) {
	e := newLossEnv(t, jsonld.LayoutB, objstore.Config{})
	e.must(e.plain.Init(e.ctx, "db"))
	_, err := e.plain.PublishIndex(e.ctx, "db", 1, "i1")
	e.must(err)
	if _, err := e.lossy.Lookup(e.ctx, "db"); err != nil { // caches both files
		t.Fatal(err)
	}
	e.must(e.plain.Purge(e.ctx, "db"))
	e.must(e.plain.Init(e.ctx, "db"))
	push := driver.Write{ID: driver.NewWriteID()}
	_, err = e.plain.PublishIndex(driver.WithWrite(e.ctx, push), "db", 5, "i5")
	e.must(err)
	push.Resend = true
	if out, err := e.lossy.PublishIndex(driver.WithWrite(e.ctx, push), "db", 5, "i5"); err != nil || !out.Applied {
		t.Fatalf("resend of a push that landed = %+v, %v; want applied", out, err)
	}
	if out, err := e.lossy.AdminPublishIndex(e.ctx, "db", 5, "i5b"); err != nil || !out.Applied {
		t.Fatalf("admin publish at the current t = %+v, %v; want applied", out, err)
	}
	rec, err := e.plain.Lookup(e.ctx, "db")
	e.must(err)
	if rec.Index == nil || rec.Index.V != 5 || rec.Index.Payload["address"] != "i5b" {
		t.Fatalf("index after both pushes = %v; want v5 i5b", rec.Index)
	}
}

// deleteLosingStore loses the answer of one Delete, after skip others,
// before or after applying it.
type deleteLosingStore struct {
	*memStore
	skip    int
	applied bool
	lost    bool
}

func (s *deleteLosingStore) Delete(ctx context.Context, key string, pc objstore.Precondition) error {
	if s.lost || s.skip > 0 {
		s.skip--
		return s.memStore.Delete(ctx, key, pc)
	}
	s.lost = true
	if s.applied {
		if err := s.memStore.Delete(ctx, key, pc); err != nil {
			return err
		}
	}
	return fmt.Errorf("delete %s: %w", key, errLostAnswer)
}

func (*deleteLosingStore) MaybeApplied(err error) bool { return errors.Is(err, errLostAnswer) }

// TestCollectRemovalLost: a collector whose removal's answer is lost (of a
// file of the record, or of its own mark) reports what it kept and leaves
// it to the next run, which removes it; a lost answer is no failure of the
// run.
func TestCollectRemovalLost(t *testing.T) {
	for _, l := range []jsonld.Layout{jsonld.LayoutB, jsonld.LayoutC} {
		for _, skip := range []int{0, 1} {
			for _, applied := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/skip%d/applied=%v", l, skip, applied), func(t *testing.T) {
					e := newLossEnv(t, l, objstore.Config{})
					e.must(e.plain.Init(e.ctx, "db"))
					_, err := e.plain.PublishIndex(e.ctx, "db", 1, "i1")
					e.must(err)
					e.must(e.plain.Purge(e.ctx, "db"))
					st := &deleteLosingStore{memStore: e.st, skip: skip, applied: applied}
					gc := nameservice.New(memDriver{objstore.New(st, objstore.Config{Name: "mem", Layout: l})})
					var lost []string
					stats, err := gc.Collect(e.ctx, nameservice.CollectOptions{Report: func(c nameservice.Collected) {
						if !c.Removed && strings.Contains(c.Reason, "answer was lost") {
							lost = append(lost, c.Object)
						}
					}})
					if err != nil {
						t.Fatalf("collect with a lost answer: %v, want it left to the next run", err)
					}
					if !st.lost || len(lost) != 1 || stats.Kept != 1 {
						t.Fatalf("collect reported %v lost (stats %+v), want the one object whose answer was lost", lost, stats)
					}
					e.st.expireMarks()
					if _, err := gc.Collect(e.ctx, nameservice.CollectOptions{}); err != nil {
						t.Fatalf("the next run: %v", err)
					}
					if keys := e.st.keys(); len(keys) != 0 {
						t.Fatalf("left after the next run: %v", keys)
					}
				})
			}
		}
	}
}

// expireMarks moves every collector's mark's f:collectUntil into the past,
// as if its hold had run out.
func (m *memStore) expireMarks() {
	m.mu.Lock()
	defer m.mu.Unlock()
	until := regexp.MustCompile(`(collectUntil"\s*:\s*)(\{"@value"\s*:\s*)?\d+`)
	for k, o := range m.objs {
		o.data = until.ReplaceAll(o.data, []byte("${1}${2}1"))
		m.objs[k] = o
	}
}

func (m *memStore) keys() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Sorted(maps.Keys(m.objs))
}
