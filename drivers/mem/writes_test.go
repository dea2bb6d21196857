package mem_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/mem"
	"nameservice.dev/nameservice/internal/testing/resendtest"
	"nameservice.dev/nameservice/model"
)

// write returns a context carrying the write named id, resent or not.
func write(id string, resend bool) context.Context {
	return driver.WithWrite(context.Background(), driver.Write{ID: id, Resend: resend})
}

var recID = model.ID{Name: "db", Branch: "main"}

// resendEnv is a store with a record, a client that writes and another
// that purges and creates it again.
type resendEnv struct {
	t     *testing.T
	a, b  *mem.Driver
	fresh *model.Record
}

func newResendEnv(t *testing.T) *resendEnv {
	s := mem.NewStore()
	e := &resendEnv{t: t, a: s.Open(), b: s.Open(), fresh: model.NewLedger(recID, 1)}
	e.must(e.b.Create(context.Background(), e.fresh.Clone()))
	return e
}

func (e *resendEnv) must(err error) {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
}

// recreate purges the record and creates it again, as another client.
func (e *resendEnv) recreate() {
	e.t.Helper()
	e.must(e.b.Delete(context.Background(), recID))
	e.must(e.b.Create(context.Background(), e.fresh.Clone()))
}

// unknown checks that err is an unknown outcome and that the record is
// still as want (nil: absent): the resend wrote nothing.
func (e *resendEnv) unknown(what string, err error, want *model.Record) {
	e.t.Helper()
	if !errors.Is(err, model.ErrOutcomeUnknown) || !errors.Is(err, model.ErrUnavailable) {
		e.t.Fatalf("%s = %v; want outcome unknown", what, err)
	}
	got, gerr := e.b.Get(context.Background(), recID)
	switch {
	case want == nil && !errors.Is(gerr, model.ErrNotFound):
		e.t.Fatalf("after %s: %+v, %v; want no record", what, got, gerr)
	case want != nil && (gerr != nil || !reflect.DeepEqual(got, want)):
		e.t.Fatalf("after %s: %+v, %v; want %+v: the resend wrote", what, got, gerr, want)
	}
}

func (e *resendEnv) get() *model.Record {
	e.t.Helper()
	r, err := e.b.Get(context.Background(), recID)
	e.must(err)
	return r
}

func TestResendOfAnUpdate(t *testing.T) {
	e := newResendEnv(t)
	publish := func(ctx context.Context, t int64) (driver.Outcome, error) {
		return e.a.Update(ctx, recID, model.Head, driver.IfAbove(), model.RefValue("c", t))
	}
	for i, w := range []string{"w2", "w3"} {
		if out, err := publish(write(w, false), int64(i+2)); err != nil || !out.Applied {
			t.Fatalf("publish %s: %+v, %v", w, out, err)
		}
	}
	// Found: done, and not applied again over the later write.
	if out, err := publish(write("w2", true), 2); err != nil || !out.Applied || !out.Current.Equal(model.RefValue("c", 2)) {
		t.Fatalf("resend of a write that landed: %+v, %v; want applied", out, err)
	}
	if h := e.get().Head; !h.Equal(model.RefValue("c", 3)) {
		t.Fatalf("head after the resend: %v; want t 3: the resend wrote again", h)
	}
	now := e.get()
	_, err := publish(write("never-sent", true), 4)
	e.unknown("resend of a write the store never saw", err, now)
	e.recreate()
	_, err = publish(write("w3", true), 3)
	e.unknown("resend after a purge and a create", err, e.fresh)
	// A write pushed out by three later ones is not found either.
	for i, w := range []string{"x1", "x2", "x3", "x4"} {
		if _, err := publish(write(w, false), int64(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	_, err = publish(write("x1", true), 1)
	e.unknown("resend of a write three others pushed out", err, e.get())
}

func TestResendOfARetract(t *testing.T) {
	e := newResendEnv(t)
	now := e.get()
	e.unknown("resend of a retract the store never saw", e.a.Retract(write("r0", true), recID, time.Unix(5, 0)), now)
	e.must(e.a.Retract(write("r1", false), recID, time.Unix(5, 0)))
	retracted := e.get()
	e.must(e.a.Retract(write("r1", true), recID, time.Unix(6, 0)))
	e.must(e.a.Retract(write("r2", true), recID, time.Unix(6, 0))) // retracted: done, whoever did it
	if got := e.get(); !reflect.DeepEqual(got, retracted) {
		t.Fatalf("after resends: %+v; want %+v", got, retracted)
	}
	e.recreate()
	e.unknown("resend after a purge and a create", e.a.Retract(write("r1", true), recID, time.Unix(6, 0)), e.fresh)
}

func TestResendOfACreate(t *testing.T) {
	e := newResendEnv(t)
	e.must(e.b.Delete(context.Background(), recID))
	e.unknown("resend of a create the store never saw", e.a.Create(write("c1", true), e.fresh.Clone()), nil)
	e.must(e.a.Create(write("c1", false), e.fresh.Clone()))
	e.must(e.a.Create(write("c1", true), e.fresh.Clone()))
	e.recreate()
	err := e.a.Create(write("c1", true), e.fresh.Clone())
	e.unknown("resend after a purge and a create", err, e.fresh)
}

func TestResendOfADelete(t *testing.T) {
	e := newResendEnv(t)
	e.unknown("resend of a delete the store never saw", e.a.Delete(write("d1", true), recID), e.fresh)
	e.must(e.a.Delete(write("d1", false), recID))
	e.must(e.a.Delete(write("d1", true), recID))
	e.must(e.b.Create(context.Background(), e.fresh.Clone()))
	e.must(e.a.Delete(write("d1", true), recID)) // it did purge the ID, before the create
	if got := e.get(); !reflect.DeepEqual(got, e.fresh) {
		t.Fatalf("after the resend: %+v; want the new record untouched", got)
	}
	e.recreate()
	e.unknown("resend of a delete after another purge", e.a.Delete(write("d1", true), recID), e.fresh)
}

// TestBranchResend: a resend of a branch create or drop writes nothing and
// is done only when the store holds the write (resendtest): it remembers
// the last purge of an ID, a branch drop included.
func TestBranchResend(t *testing.T) {
	s := mem.NewStore()
	resendtest.Branches(t, nameservice.New(s.Open()), nameservice.New(s.Open()), "db", resendtest.Memory{Drops: true})
}
