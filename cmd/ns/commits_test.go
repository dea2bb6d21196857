package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestCommits reads and prunes a file store's commit index with ns commits:
// pending prints "t cid" lines above a t (JSON with --json), prune drops
// those up to a t, a record without an index says so, and a backend
// without one (mem) fails with a one-line error.
func TestCommits(t *testing.T) {
	c := &cli{t: t, url: "file://" + filepath.ToSlash(t.TempDir())}
	c1, c2 := testCID("c1"), testCID("c2")
	c.want(exitOK, "init", "mydb")
	if out := c.want(exitOK, "commits", "pending", "mydb"); !strings.Contains(out, "no usable commit index of mydb above t 0") {
		t.Errorf("pending without an index: %q", out)
	}
	c.want(exitOK, "publish-commit", "mydb", "1", c1)
	c.want(exitOK, "publish-commit", "mydb", "2", c2)
	if out, want := c.want(exitOK, "commits", "pending", "mydb"), "1 "+c1+"\n2 "+c2+"\n"; out != want {
		t.Errorf("pending: %q, want %q", out, want)
	}
	if out, want := c.want(exitOK, "commits", "pending", "mydb", "1", "--json"), `{"commits":[{"t":2,"cid":"`+c2+`"}],"id":"mydb","since_t":1}`+"\n"; out != want {
		t.Errorf("pending --json: %q, want %q", out, want)
	}
	c.want(exitOK, "commits", "prune", "mydb", "1")
	if out, want := c.want(exitOK, "commits", "pending", "mydb"), "2 "+c2+"\n"; out != want {
		t.Errorf("pending after prune up to 1: %q, want %q", out, want)
	}
	c.want(exitUsage, "commits", "prune", "mydb")
	c.want(exitUsage, "commits", "pending", "mydb", "x")
	newCLI(t).want(exitError, "commits", "pending", "mydb")
}
