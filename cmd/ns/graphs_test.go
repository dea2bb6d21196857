package main

import (
	"context"
	"testing"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/model"
)

// TestPublishIndexGraphs publishes a named-graph index from the CLI and
// reads back every graph; bad --graph values are usage errors.
func TestPublishIndexGraphs(t *testing.T) {
	c := newCLI(t)
	c.want(exitOK, "init", "db")
	c.want(exitOK, "publish-index", "db", "5", "d5", "--graph", "txn-metadata=m5@5:1", "--graph", "audit-log=null")
	c.want(exitNotApplied, "publish-index", "db", "5", "d5", "--graph", "txn-metadata=m5@5:2")
	c.want(exitOK, "publish-index", "db", "5", "d5", "--admin", "--graph", "txn-metadata=m5@5:2")
	ns, err := nameservice.Open(context.Background(), c.url)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := ns.Lookup(context.Background(), "db")
	if err != nil {
		t.Fatal(err)
	}
	want := model.GraphsValue(map[string]*nameservice.GraphIndex{
		nameservice.DefaultGraph: {Address: "d5", T: 5},
		"txn-metadata":           {Address: "m5", T: 5, Rev: 2},
	})
	if !rec.Index.Equal(want) {
		t.Fatalf("index = %v, want %v", *rec.Index, want)
	}
	for _, bad := range []string{"noequals", "g=addr", "g=addr@0", "g=addr@5:-1", "default=other@5"} {
		c.want(exitUsage, "publish-index", "db", "6", "d6", "--graph", bad)
	}
	c.want(exitUsage, "publish-index", "db", "6", "d6", "--graph", "g=a@6", "--graph", "g=b@6")
}
