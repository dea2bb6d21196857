package main

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/internal/testing/testenv"
)

// TestWatchPipedPrintsJSON: ns watch, piped and without --json, prints
// every change as a JSON line, as its help says and as list and lookup do
// when piped; NS_OUTPUT=human gives the readable line.
func TestWatchPipedPrintsJSON(t *testing.T) {
	for _, human := range []bool{false, true} {
		if human {
			t.Setenv(outputEnv, "human")
		}
		c := newCLI(t)
		c.want(exitOK, "init", "db")
		ctx, cancel := context.WithCancel(context.Background())
		var out testenv.Buffer
		done := make(chan int)
		go func() { done <- run(ctx, []string{"--url", c.url, "watch", "db"}, &out, &out) }()
		deadline := time.Now().Add(time.Minute)
		for tt := 1; !strings.Contains(out.String(), "db:main"); tt++ {
			if time.Now().After(deadline) {
				t.Fatalf("no change printed: %q", out.String())
			}
			c.want(exitOK, "publish-commit", "db", strconv.Itoa(tt), "c")
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		if code := <-done; code != exitOK {
			t.Fatalf("ns watch exited %d: %s", code, out.String())
		}
		line, _, _ := strings.Cut(out.String(), "\n")
		var e event
		err := json.Unmarshal([]byte(line), &e)
		switch {
		case !human && (err != nil || e.ID != "db:main" || e.Concern != "head"):
			t.Errorf("ns watch | cat printed %q, not a JSON line (%v)", line, err)
		case human && err == nil:
			t.Errorf("NS_OUTPUT=human ns watch printed JSON: %q", line)
		}
	}
}

// TestWatchIntervalHelpDefault: ns watch --help gives the interval a poll
// really uses when --interval is not given, not 0s.
func TestWatchIntervalHelpDefault(t *testing.T) {
	c := newCLI(t)
	help := c.want(exitOK, "help", "watch")
	if want := "(default " + nameservice.DefaultWatchInterval.String() + ")"; !strings.Contains(help, want) {
		t.Errorf("ns help watch does not say %s:\n%s", want, help)
	}
}

// TestCheckPrefixMustMakeNewIDs: a --prefix under which the cases cannot
// create their records (an '@', refused in new names; a ':', which puts
// the cases' own branch after a second one) is a usage error naming it,
// not a run that reports the store's guarantees broken.
func TestCheckPrefixMustMakeNewIDs(t *testing.T) {
	c := newCLI(t)
	for _, p := range []string{"@x/", "x@y/", "a:b/"} {
		code, out, errs := c.run("check", "mem://check-prefix", "--quick", "--group", "Lifecycle,Lease", "--prefix", p)
		if code != exitUsage || !strings.Contains(errs, "--prefix") {
			t.Errorf("ns check --prefix %s: exit %d, stderr %q, stdout:\n%s", p, code, errs, out)
		}
	}
}
