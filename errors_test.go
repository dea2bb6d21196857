package nameservice_test

import (
	"context"
	"strings"
	"testing"

	"nameservice.dev/nameservice"
	_ "nameservice.dev/nameservice/drivers/mem"
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
