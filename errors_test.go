package nameservice_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"nameservice.dev/nameservice"
	_ "nameservice.dev/nameservice/drivers/all"
)

// TestErrorsNameTheIDOnce checks that the portable layer's context and the
// driver's message together name the ID exactly once.
func TestErrorsNameTheIDOnce(t *testing.T) {
	ctx := context.Background()
	ns, err := nameservice.Open(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	if err := ns.Init(ctx, "mydb"); err != nil {
		t.Fatal(err)
	}
	if err := ns.PublishGraphSource(ctx, "gs", "db:Bm25Index", nil, nil); err != nil {
		t.Fatal(err)
	}
	_, errHead := ns.Head(ctx, "gs")
	_, errPublish := ns.PublishCommit(ctx, "gs", 1, "c1")
	_, errLookup := ns.Lookup(ctx, "nosuch")
	for _, c := range []struct {
		err error
		id  string
	}{
		{ns.Init(ctx, "mydb"), "mydb:main"},
		{errLookup, "nosuch:main"},
		{ns.Purge(ctx, "nosuch"), "nosuch:main"},
		{errHead, "gs:main"},
		{errPublish, "gs:main"},
	} {
		if c.err == nil {
			t.Fatalf("want an error naming %s", c.id)
		}
		if n := strings.Count(c.err.Error(), c.id); n != 1 {
			t.Errorf("%q names %s %d times, want once", c.err, c.id, n)
		}
	}
}

// TestStructuredError: every operation's error is an *Error that names
// its operation, record and code, and still matches its sentinel and the
// cause's.
func TestStructuredError(t *testing.T) {
	ctx := context.Background()
	ns, err := nameservice.Open(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	_, err = ns.PublishCommit(ctx, "nosuch", 1, "c1")
	var e *nameservice.Error
	if !errors.As(err, &e) || e.Op != "publish commit" || e.ID.String() != "nosuch:main" || e.Code != nameservice.ErrorCodeOf(err) ||
		e.Code.Sentinel() != nameservice.ErrNotFound || !errors.Is(err, nameservice.ErrNotFound) {
		t.Fatalf("publish to an unknown ID: %#v (%v), want an *Error of publish commit on nosuch:main, NotFound", e, err)
	}
	err = ns.Init(ctx, "bad:id:x")
	if !errors.As(err, &e) || e.Op != "init" || !e.ID.IsZero() || !errors.Is(err, nameservice.ErrInvalidID) || !errors.Is(err, nameservice.ErrInvalidArgument) {
		t.Fatalf("init of an invalid ID: %#v (%v), want an *Error of init without an ID, matching ErrInvalidID and ErrInvalidArgument", e, err)
	}
	_, err = ns.PushStatus(ctx, "nosuch", nameservice.StatusValue(1, "ready", nil), nameservice.StatusValue(2, "x", nil))
	if !errors.As(err, &e) || e.Op != "push status" || e.Code.Sentinel() != nameservice.ErrNotFound {
		t.Fatalf("push status to an unknown ID: %#v (%v)", e, err)
	}
}
