package main

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"nameservice.dev/nameservice/internal/testing/testenv"
)

// TestListBySelection: ns list --state and --source-type list exactly the
// records in that state or of that type.
func TestListBySelection(t *testing.T) {
	c := newCLI(t)
	for _, id := range []string{"a", "b", "c"} {
		c.want(exitOK, "init", id)
	}
	c.want(exitOK, "push-status", "b", "--expect-v", "1", "indexing")
	c.want(exitOK, "create-graph-source", "g1", "--type", "db:Bm25Index")
	c.want(exitOK, "create-graph-source", "g2", "--type", "db:HnswIndex")
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--state", "indexing"}, []string{"b:main"}},
		{[]string{"--state", "ready", "--kind", "ledger"}, []string{"a:main", "c:main"}},
		{[]string{"--source-type", "db:HnswIndex"}, []string{"g2:main"}},
		{[]string{"--source-type", "db:HnswIndex", "--state", "indexing"}, nil},
	} {
		out := c.want(exitOK, append([]string{"list", "--json"}, tc.args...)...)
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if line == "" {
				continue
			}
			var r struct{ ID string }
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("ns list %v printed %q", tc.args, line)
			}
			got = append(got, r.ID)
		}
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("ns list %v = %q, want %q", tc.args, got, tc.want)
		}
	}
	c.want(exitUsage, "list", "--state", "\xff")
}

// TestHeads: ns heads prints a ledger's head and index, as JSON or for a
// person, and refuses a graph source.
func TestHeads(t *testing.T) {
	c := newCLI(t)
	c.want(exitOK, "init", "db")
	c.want(exitOK, "publish-commit", "db", "4", "c4")
	c.want(exitOK, "publish-index", "db", "3", "i3")
	if out := c.want(exitOK, "heads", "db", "--json"); strings.TrimSpace(out) != `{"head":{"v":4,"payload":{"address":"c4","t":4}},"index":{"v":3,"payload":{"address":"i3","t":3}}}` {
		t.Fatalf("ns heads --json = %s", out)
	}
	t.Setenv(outputEnv, "human")
	if out := c.want(exitOK, "heads", "db"); out != "head   commit_t 4  c4\nindex  index_t 3  i3\n" {
		t.Fatalf("ns heads = %q", out)
	}
	c.want(exitOK, "create-graph-source", "gs", "--type", "db:Bm25Index")
	if code, _, errs := c.run("heads", "gs"); code != exitError || !strings.Contains(errs, "wrong kind") {
		t.Fatalf("ns heads of a graph source: exit %d, %q", code, errs)
	}
	c.want(exitNotFound, "heads", "none")
}

// TestWatchSelection: ns watch --concerns head --kind ledger prints the
// ledgers' head changes and nothing else, though their indexes and a graph
// source change before each head.
func TestWatchSelection(t *testing.T) {
	c := newCLI(t)
	c.want(exitOK, "init", "db")
	c.want(exitOK, "create-graph-source", "gs", "--type", "db:Bm25Index")
	ctx, cancel := context.WithCancel(context.Background())
	var out testenv.Buffer
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"--url", c.url, "--json", "watch", "--concerns", "head", "--kind", "ledger"}, &out, &out)
	}()
	// The watch starts at some point: write rounds until it reports a
	// head. Each round changes the other concern and kind first, so a
	// watch that let them through would print them before that head.
	for tt := 1; !strings.Contains(out.String(), `"concern":"head"`); tt++ {
		if tt > 500 {
			t.Fatalf("no head change printed after %d rounds: %q", tt, out.String())
		}
		ts := strconv.Itoa(tt)
		c.want(exitOK, "publish-index", "db", ts, "i"+ts)
		c.want(exitOK, "publish-index", "gs", ts, "g"+ts)
		c.want(exitOK, "publish-commit", "db", ts, "c"+ts)
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != exitOK {
		t.Fatalf("ns watch exited %d: %s", code, out.String())
	}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if !strings.Contains(line, `"id":"db:main","concern":"head"`) {
			t.Fatalf("ns watch --concerns head --kind ledger printed %q", line)
		}
	}
	c.want(exitUsage, "watch", "--concerns", "heads")
	c.want(exitUsage, "watch", "--kind", "table")
}
