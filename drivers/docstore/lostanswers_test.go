package docstore

import (
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
func TestLostAnswers(t *testing.T) {
	conformance.RunLostAnswers(t, lossyHarness(isWrite))
}

// lossyHarness opens plain clients of the test table and lossy ones through
// a proxy that loses the answer of a write when losable says it may and the
// test's lose function agrees.
func lossyHarness(losable func(op string, body []byte) bool) conformance.AnswerLoser {
	return conformance.LossyHarnessFunc(func(ctx context.Context, t *testing.T) (conformance.Opener, conformance.LossyOpener, error) {
		u := dynamoURL(t)
		open := func(ctx context.Context) (driver.Driver, error) { return openURL(ctx, u) }
		lossy := func(ctx context.Context, lose func() bool) (driver.Driver, error) {
			proxy, err := losingProxy(t, testenv.DynamoDBEndpoint(t), losable, lose)
			if err != nil {
				return nil, err
			}
			return openURL(ctx, tableURL(tableName, proxy))
		}
		return open, lossy, nil
	})
}

// isWrite reports whether a DynamoDB request is a write: a Create
// (PutItem if absent), a Replace (PutItem on a revision), a Put or a
// Delete.
func isWrite(op string, _ []byte) bool { return op == "PutItem" || op == "DeleteItem" }

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

// TestLostCreate loses the answer of every write of a create: the creator
// finds its own file by its write, and the create is done, once.
func TestLostCreate(t *testing.T) {
	ctx := context.Background()
	u := dynamoURL(t)
	var lost atomic.Int32
	proxy, err := losingProxy(t, testenv.DynamoDBEndpoint(t), isWrite, func() bool { lost.Add(1); return true })
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
		t.Fatalf("create whose writes lost their answers: %v; want done", err)
	}
	if n := lost.Load(); n < 1 {
		t.Fatalf("%d answers lost; want at least the defining file's", n)
	}
	got, err := plain.Get(ctx, id)
	if err != nil || !reflect.DeepEqual(got, rec) {
		t.Fatalf("record: %+v, %v; want %+v", got, err, rec)
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
	stores(t, false, func(t *testing.T, open func() *Driver) {
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
		if got, err := b.Get(ctx, id); err != nil || !reflect.DeepEqual(got, fresh) {
			t.Fatalf("record after a resent create: %+v, %v; want it as created", got, err)
		}
		must(a.Delete(as("d1", false), id))
		must(a.Delete(as("d1", true), id)) // its mark found: done
		wantUnknown(t, "resend of a delete never sent", a.Delete(as("d0", true), id))
		if _, err := b.Get(ctx, id); !errors.Is(err, model.ErrNotFound) {
			t.Fatalf("record after the resent deletes: %v; want not found", err)
		}
	})
}
