package docstore

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"nameservice.dev/nameservice/conformance"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/testing/faultproxy"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/model"
)

// TestLostAnswers loses the answer of each write at a proxy in front of
// DynamoDB Local while another client purges (and creates again) the record.
// The answer lost is that of the write that decides the operation (see
// deciding).
func TestLostAnswers(t *testing.T) {
	conformance.RunLostAnswers(t, lossyHarness(deciding))
}

// lossyHarness opens plain clients of the test table and lossy ones through
// a proxy that loses the answer of a write when losable says it may and the
// test's lose function agrees.
func lossyHarness(losable func(op string, body []byte) bool) conformance.AnswerLoser {
	return conformance.LossyHarnessFunc(func(ctx context.Context, t *testing.T) (conformance.Opener, conformance.LossyOpener, error) {
		u := dynamoURL(t)
		open := func(ctx context.Context) (driver.Driver, error) { return openLossTest(ctx, u) }
		lossy := func(ctx context.Context, lose func() bool) (driver.Driver, error) {
			proxy, err := losingProxy(t, testenv.DynamoDBEndpoint(t), losable, lose)
			if err != nil {
				return nil, err
			}
			return openLossTest(ctx, tableURL(tableName, proxy))
		}
		return open, lossy, nil
	})
}

// lossStaleAfter is the StaleAfter of every client of a loss test: a purge
// whose answer is lost leaves its mark on the meta document, and a create
// in the world that follows waits until the mark is stale, 30 s by default.
const lossStaleAfter = 10 * time.Second

func openLossTest(ctx context.Context, rawURL string) (*Driver, error) {
	d, err := openURL(ctx, rawURL)
	if err == nil {
		d.staleAfter = lossStaleAfter
	}
	return d, err
}

// deciding reports whether a DynamoDB request is a write that decides an
// operation of this driver: a conditional Replace (PutItem on a revision)
// of a concern document (a push, a retract), of a meta document (a create's
// commit, a purge's mark). A create's claim and concern documents
// (PutItems if absent) come before its commit and are invisible until it; a
// purge's removals (DeleteItems) come after its mark. TestLostCreateSteps
// loses the claim's and the concern documents' answers.
func deciding(op string, body []byte) bool {
	return op == "PutItem" && !bytes.Contains(body, []byte("attribute_not_exists"))
}

// losingProxy starts a fault proxy to target that, after the server
// answered a write for which losable reports true with success, calls lose
// and loses the answer when it returns true (see faultproxy.Config.Lose).
// It closes when the test ends.
func losingProxy(t *testing.T, target string, losable func(op string, body []byte) bool, lose func() bool) (string, error) {
	var marked sync.Map // *http.Request → true: losable
	p, err := faultproxy.Start(faultproxy.Config{
		Target: target,
		Forwarded: func(r *http.Request, body []byte, status int) {
			_, op, _ := strings.Cut(r.Header.Get("X-Amz-Target"), ".")
			if status < 300 && losable(op, body) {
				marked.Store(r, true)
			}
		},
		Lose: func(r *http.Request) bool {
			_, ok := marked.LoadAndDelete(r)
			return ok && lose()
		},
	})
	if err != nil {
		return "", err
	}
	t.Cleanup(func() { _ = p.Close() })
	return p.URL(), nil
}

// TestLostCreateSteps loses the answers of every create-if-absent write of
// a create (its claim and its concern documents): the creator finds its
// own documents by their generation, and the create is done, once.
func TestLostCreateSteps(t *testing.T) {
	ctx := context.Background()
	u := dynamoURL(t)
	var lost atomic.Int32
	proxy, err := losingProxy(t, testenv.DynamoDBEndpoint(t), func(op string, body []byte) bool {
		return op == "PutItem" && !deciding(op, body)
	}, func() bool { lost.Add(1); return true })
	if err != nil {
		t.Fatal(err)
	}
	lossy, err := openURL(ctx, tableURL(tableName, proxy))
	if err != nil {
		t.Fatal(err)
	}
	defer lossy.Close()
	plain, err := openURL(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	id := testID(t)
	rec := model.NewLedger(id, 1)
	if err := lossy.Create(driver.WithWrite(ctx, driver.Write{ID: "create-1"}), rec.Clone()); err != nil {
		t.Fatalf("create whose claim and documents lost their answers: %v; want done", err)
	}
	if n := lost.Load(); n < 5 {
		t.Fatalf("%d answers lost; want at least 5: the claim and 4 concern documents", n)
	}
	got, err := plain.Get(ctx, id)
	if err != nil || !reflect.DeepEqual(got, rec) {
		t.Fatalf("record: %+v, %v; want %+v", got, err, rec)
	}
	meta, err := plain.getOne(ctx, keyDoc(id, skMeta))
	if err != nil || meta.Gen != "create-1" {
		t.Fatalf("meta document: %+v, %v; want generation create-1, the create's write ID", meta, err)
	}
}

// as returns a context carrying the write named id, resent or not.
func as(id string, resend bool) context.Context {
	return driver.WithWrite(context.Background(), driver.Write{ID: id, Resend: resend})
}

func wantUnknown(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, model.ErrOutcomeUnknown) || !errors.Is(err, model.ErrUnavailable) {
		t.Fatalf("%s = %v; want outcome unknown", what, err)
	}
}

// TestResends sends writes again as ns serve does for a client's resend
// (driver.Write.Resend): found in the store they are done and not applied
// again; not found they are unknown and write nothing, after a purge and
// a create of the record too.
func TestResends(t *testing.T) {
	stores(t, func(t *testing.T, open func() *Driver) {
		a, b, id := open(), open(), testID(t)
		ctx := context.Background()
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		head := func(w string, resend bool, v int64) error {
			out, err := a.Update(as(w, resend), id, model.Head, driver.IfAbove(), model.RefValue("c", v))
			if err == nil && !out.Applied {
				t.Fatalf("update %s: not applied, current %v", w, out.Current)
			}
			return err
		}
		must(b.Create(ctx, model.NewLedger(id, 1)))
		must(head("u1", false, 2))
		must(head("u2", false, 3))
		must(head("u1", true, 2)) // found: done, not written over t 3
		wantUnknown(t, "resend of an update never sent", head("u0", true, 4))
		must(a.Retract(as("r1", false), id, time.Unix(5, 0)))
		must(a.Retract(as("r1", true), id, time.Unix(6, 0)))
		if got, err := b.Get(ctx, id); err != nil || got.Head.V != 3 || got.Status.V != 2 || !got.Retracted {
			t.Fatalf("after the resends: %+v, %v; want head t 3, status v 2, retracted", got, err)
		}

		must(b.Delete(ctx, id))
		fresh := model.NewLedger(id, 1)
		must(b.Create(ctx, fresh.Clone()))
		wantUnknown(t, "resend of an update after a purge and a create", head("u2", true, 3))
		wantUnknown(t, "resend of a retract after a purge and a create", a.Retract(as("r1", true), id, time.Unix(6, 0)))
		wantUnknown(t, "resend of a create that did not make the record", a.Create(as("c1", true), fresh.Clone()))
		if got, err := b.Get(ctx, id); err != nil || !reflect.DeepEqual(got, fresh) {
			t.Fatalf("record after the resends: %+v, %v; want it as created", got, err)
		}

		must(b.Delete(ctx, id))
		must(a.Create(as("c1", false), fresh.Clone()))
		must(a.Create(as("c1", true), fresh.Clone()))
		must(a.Delete(as("d1", false), id))
		wantUnknown(t, "resend of a delete whose mark is gone", a.Delete(as("d1", true), id))

		// A delete that died after its mark: its resend finishes it.
		must(b.Create(ctx, fresh.Clone()))
		meta, err := b.getOne(ctx, keyDoc(id, skMeta))
		must(err)
		meta.State, meta.W = statePurging, "d2"
		must(b.coll.Replace(ctx, meta))
		must(a.Delete(as("d2", true), id))
		if docs, err := b.getDocs(ctx, id, allSorts); err != nil || docs[0] != nil || docs[1] != nil {
			t.Fatalf("documents after the resent delete: %+v, %v; want none", docs, err)
		}
	})
}

// TestARewindStartsANewLife checks that a write moving a watermark back (a
// head reset) ends the proofs of the write IDs recorded before it: a write
// at t 5 whose answer was lost, followed by a reset to t 1 and three
// publishes below t 5, may have landed; the document's watermark (4) and
// its write IDs (all below 5) would say it never did.
func TestARewindStartsANewLife(t *testing.T) {
	stores(t, func(t *testing.T, open func() *Driver) {
		d, id := open(), testID(t)
		ctx := context.Background()
		if err := d.Create(ctx, model.NewLedger(id, 1)); err != nil {
			t.Fatal(err)
		}
		_, before, err := d.readConcern(ctx, id, model.Head)
		if err != nil {
			t.Fatal(err)
		}
		lost := d.updateWrite(as("lost", false), id, model.Head, model.RefValue("c", 5))
		lost.ambiguous, lost.gen, lost.life, lost.cause = true, before.Gen, before.Life, errors.New("answer lost")
		if _, err := d.Update(as("lost", false), id, model.Head, driver.IfAbove(), model.RefValue("c", 5)); err != nil {
			t.Fatal(err)
		}
		if _, err := d.ResetHead(ctx, id, model.RefValue("r", 1), nil); err != nil {
			t.Fatal(err)
		}
		for v := int64(2); v <= 4; v++ {
			if _, err := d.Update(ctx, id, model.Head, driver.IfAbove(), model.RefValue("c", v)); err != nil {
				t.Fatal(err)
			}
		}
		_, _, err = lost.current(ctx)
		wantUnknown(t, "resolving a write pushed out after a rewind", err)
	})
}
