package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers"
	"nameservice.dev/nameservice/internal/testing/testenv"
)

// ns runs the CLI in-process against a named in-memory store and returns
// its exit code and output.
type cli struct {
	t   *testing.T
	url string
}

var stores atomic.Int64

// newCLI returns a CLI on a fresh named store (named stores live as long as
// the process, and tests may run more than once in one).
func newCLI(t *testing.T) *cli {
	return &cli{t: t, url: fmt.Sprintf("mem://cli-%d", stores.Add(1))}
}

// callLimit bounds one command, so a server that never finishes what a
// command waits for (an index DynamoDB Local never makes ACTIVE) fails the
// test with the command's error instead of hanging the package. No command
// a test runs takes a tenth of it on a loaded machine.
const callLimit = 5 * time.Minute

func (c *cli) run(args ...string) (int, string, string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callLimit)
	defer cancel()
	var out, errb bytes.Buffer
	code := run(ctx, append([]string{"--url", c.url}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

func (c *cli) want(code int, args ...string) string {
	c.t.Helper()
	got, out, errs := c.run(args...)
	if got != code {
		c.t.Fatalf("ns %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), got, code, out, errs)
	}
	if code != exitOK && code != exitNotApplied && strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		c.t.Fatalf("ns %s: stderr is not one line: %q", strings.Join(args, " "), errs)
	}
	return out
}

func TestExitCodes(t *testing.T) {
	c := newCLI(t)
	c.want(exitOK, "init", "mydb")
	c.want(exitExists, "init", "mydb")
	c.want(exitNotFound, "lookup", "nothing")
	c.want(exitUsage, "init", "bad:id:x")
	c.want(exitUsage, "init", "a/../b")
	c.want(exitUsage, "frobnicate")
	c.want(exitUsage, "init")
	c.want(exitUsage, "publish-commit", "mydb", "notanumber", "addr")
	c.want(exitOK, "publish-commit", "mydb", "5", "c5")
	c.want(exitNotApplied, "publish-commit", "mydb", "4", "c4")
	c.want(exitNotFound, "publish-commit", "ghost", "1", "c1")
	c.want(exitUsage, "publish-commit", "mydb", "0", "c0")
}

func TestPushOutcomeJSON(t *testing.T) {
	c := newCLI(t)
	c.want(exitOK, "init", "mydb")
	out := c.want(exitOK, "--json", "publish-commit", "mydb", "7", "c7")
	var got struct {
		Applied bool `json:"applied"`
		Current struct {
			V       int64          `json:"v"`
			Payload map[string]any `json:"payload"`
		} `json:"current"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || !got.Applied || got.Current.V != 7 || got.Current.Payload["address"] != "c7" {
		t.Fatalf("outcome JSON = %s (%v)", out, err)
	}
	out = c.want(exitNotApplied, "publish-commit", "mydb", "6", "c6", "--json")
	if !strings.Contains(out, `"applied":false`) || !strings.Contains(out, `"address":"c7"`) {
		t.Fatalf("stale outcome JSON = %s", out)
	}
}

func TestIndexAndCAS(t *testing.T) {
	c := newCLI(t)
	c.want(exitOK, "cas-ref", "db", "head", "--expect-none", "3", "c3")
	c.want(exitNotApplied, "cas-ref", "db", "head", "--expect-none", "4", "c4")
	c.want(exitNotApplied, "cas-ref", "db", "head", "--expect-t", "3", "--expect-address", "other", "4", "c4")
	c.want(exitOK, "cas-ref", "db", "head", "--expect-t", "3", "--expect-address", "c3", "4", "c4")
	c.want(exitOK, "cas-ref", "db", "index", "--expect-t", "0", "2", "i2")
	c.want(exitNotApplied, "publish-index", "db", "2", "i2b")
	c.want(exitOK, "publish-index", "db", "2", "i2b", "--admin")
	c.want(exitUsage, "cas-ref", "db", "status", "--expect-none", "1", "x")
	c.want(exitUsage, "cas-ref", "db", "head", "5", "c5")
	rec := c.want(exitOK, "lookup", "db", "--json")
	for _, s := range []string{`"head":{"v":4,"payload":{"address":"c4","t":4}}`, `"index":{"v":2,"payload":{"address":"i2b","t":2}}`} {
		if !strings.Contains(rec, s) {
			t.Fatalf("lookup = %s, want it to contain %s", rec, s)
		}
	}
}

func TestStatusConfigAndGraphSources(t *testing.T) {
	c := newCLI(t)
	c.want(exitOK, "init", "db")
	c.want(exitOK, "push-status", "db", "--expect-v", "1", "indexing", "--meta", `{"queue_depth":3}`)
	c.want(exitNotApplied, "push-status", "db", "--expect-v", "1", "maintenance")
	c.want(exitUsage, "push-status", "db", "indexing")
	c.want(exitUsage, "push-status", "db", "--expect-v", "2", "x", "--meta", "[1]")
	c.want(exitOK, "push-config", "db", "--expect-v", "0", `{"default_context":"ctx"}`)
	c.want(exitNotApplied, "push-config", "db", "--expect-v", "0", `{"default_context":"other"}`)
	c.want(exitOK, "create-graph-source", "search", "--type", "db:Bm25Index", "--dep", "db", "--config", `{"k1":1.2}`)
	c.want(exitError, "create-graph-source", "db", "--type", "db:Bm25Index")
	out := c.want(exitOK, "list", "--kind", "graph_source")
	if !strings.Contains(out, `"id":"search:main"`) || !strings.Contains(out, `"dependencies":["db:main"]`) || strings.Contains(out, `"id":"db:main"`) {
		t.Fatalf("list = %s", out)
	}
	c.want(exitOK, "retract", "db")
	if out := c.want(exitOK, "list"); strings.Contains(out, `"id":"db:main"`) {
		t.Fatalf("list without --retracted shows a retracted record: %s", out)
	}
	if out := c.want(exitOK, "list", "--retracted"); strings.Count(out, "\n") != 2 {
		t.Fatalf("list --retracted = %s, want 2 lines", out)
	}
	c.want(exitOK, "purge", "db")
	c.want(exitNotFound, "lookup", "db")
	c.want(exitUsage, "list", "--kind", "table")
}

func TestHelp(t *testing.T) {
	c := newCLI(t)
	out := c.want(exitOK, "help")
	for _, cmd := range []string{"init", "lookup", "list", "publish-commit", "publish-index", "cas-ref", "push-status", "push-config", "create-graph-source", "retract", "purge"} {
		if !strings.Contains(out, "  "+cmd+" ") {
			t.Errorf("help does not list %s", cmd)
		}
	}
}

func TestLeaseCommands(t *testing.T) {
	c := newCLI(t)
	c.want(exitOK, "init", "db")
	c.want(exitOK, "push-status", "db", "--expect-v", "1", "indexing", "--meta", `{"index_lock":{"holder":"ix-1","token":2,"ttl_ms":1000}}`)
	out := c.want(exitOK, "lease", "list")
	if !strings.Contains(out, `"holder":"ix-1"`) || !strings.Contains(out, `"name":"index"`) {
		t.Fatalf("lease list = %s", out)
	}
	out = c.want(exitOK, "lease", "break", "db", "index")
	if !strings.Contains(out, "ix-1") {
		t.Fatalf("lease break = %s", out)
	}
	c.want(exitNotFound, "lease", "break", "db", "index")
	if out := c.want(exitOK, "lease", "list"); out != "" {
		t.Fatalf("lease list after break = %s", out)
	}
	c.want(exitUsage, "lease", "frob")
}

func TestTableCreateNeedsATableBackend(t *testing.T) {
	c := newCLI(t)
	_, _, errs := c.run("table", "create")
	if !strings.Contains(errs, "no table to create") {
		t.Fatalf("ns table create on mem: stderr %q", errs)
	}
	c.want(exitUsage, "table", "drop")
}

func TestWatchResumesFromState(t *testing.T) {
	c := &cli{t: t, url: fmt.Sprintf("pagesizes://cli-%d", stores.Add(1))}
	c.want(exitOK, "init", "db")
	c.want(exitOK, "publish-commit", "db", "1", "c1")
	state := t.TempDir() + "/state.json"
	watch := func(args ...string) (out *testenv.Buffer, stop func()) {
		out = &testenv.Buffer{}
		lists := len(listed(c.url))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			run(ctx, append([]string{"--url", c.url, "--json", "watch", "--state", state}, args...), out, out)
		}()
		// The watch has read the records (its one List) once that List returned.
		waitUntil(t, "the watch reading the records", func() bool { return len(listed(c.url)) > lists })
		return out, func() { cancel(); <-done }
	}
	out, stop := watch("--prefix", "db", "--interval", "10ms")
	c.want(exitOK, "publish-commit", "db", "2", "c2")
	waitUntil(t, "the watch printing the push", func() bool {
		return strings.Contains(out.String(), `"concern":"head","old":1,"new":{"v":2`)
	})
	stop()
	// Changes while no watch runs are reported on resume, from the state.
	c.want(exitOK, "publish-commit", "db", "3", "c3")
	out, stop = watch("db")
	waitUntil(t, "the resumed watch printing the push it missed", func() bool {
		return strings.Contains(out.String(), `"old":2,"new":{"v":3`)
	})
	stop()
	if strings.Contains(out.String(), `"v":2,`) {
		t.Fatalf("resumed watch printed %q", out)
	}
}

// TestWatchOfOneID: ns watch ID prints the changes of that record only, not
// those of the records whose IDs it begins (db:main-hotfix for db:main).
func TestWatchOfOneID(t *testing.T) {
	c := &cli{t: t, url: fmt.Sprintf("pagesizes://cli-%d", stores.Add(1))}
	c.want(exitOK, "init", "db")
	c.want(exitOK, "publish-commit", "db", "1", "c1")
	c.want(exitOK, "init", "db:main-hotfix")
	out := &testenv.Buffer{}
	lists := len(listed(c.url))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		run(ctx, []string{"--url", c.url, "--json", "watch", "db:main", "--interval", "10ms"}, out, out)
	}()
	waitUntil(t, "the watch reading the records", func() bool { return len(listed(c.url)) > lists })
	c.want(exitOK, "publish-commit", "db:main-hotfix", "2", "h2")
	c.want(exitOK, "publish-commit", "db", "2", "c2")
	waitUntil(t, "the watch printing the push to db:main", func() bool {
		return strings.Contains(out.String(), `"id":"db:main","concern":"head","old":1,"new":{"v":2`)
	})
	cancel()
	<-done
	if strings.Contains(out.String(), "main-hotfix") {
		t.Fatalf("ns watch db:main printed another record's change:\n%s", out)
	}
}

// waitUntil polls cond until it holds; only a minute without fails, so a
// loaded machine is waited for.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
	}
}

// pageSizes is a mem driver (scheme "pagesizes", a process-wide store per
// host) that records the page size of every List call, per store, once
// the call returned. It keeps mem's change feed.
type pageSizes struct {
	driver.Driver
	url string
}

var (
	pageSizesMu   sync.Mutex
	pageSizesSeen = map[string][]int{}
)

func (p pageSizes) List(ctx context.Context, opts driver.ListOptions) (*driver.Page, error) {
	page, err := p.Driver.List(ctx, opts)
	pageSizesMu.Lock()
	pageSizesSeen[p.url] = append(pageSizesSeen[p.url], opts.PageSize)
	pageSizesMu.Unlock()
	return page, err
}

func (p pageSizes) Watch(ctx context.Context, opts driver.WatchOptions) (<-chan driver.Event, error) {
	return p.Driver.(driver.Watcher).Watch(ctx, opts)
}

// listed returns the page sizes of the List calls made so far on the
// pagesizes store at url.
func listed(url string) []int {
	pageSizesMu.Lock()
	defer pageSizesMu.Unlock()
	return slices.Clone(pageSizesSeen[url])
}

func init() {
	drivers.Register("pagesizes", func(ctx context.Context, u *url.URL) (driver.Driver, error) {
		d, err := drivers.Open(ctx, "mem://"+u.Host)
		return pageSizes{d, "pagesizes://" + u.Host}, err
	})
}

// TestListPageSize lists in pages of --page-size, in order and with nothing
// lost or repeated, and refuses a negative page size.
func TestListPageSize(t *testing.T) {
	c := &cli{t: t, url: fmt.Sprintf("pagesizes://cli-%d", stores.Add(1))}
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		c.want(exitOK, "init", id)
	}
	want := c.want(exitOK, "list")
	before := len(listed(c.url))
	if got := c.want(exitOK, "list", "--page-size", "2"); got != want || strings.Count(got, "\n") != 5 {
		t.Fatalf("list --page-size 2 = %s, want the 5 records of list:\n%s", got, want)
	}
	if seen := listed(c.url)[before:]; !slices.Equal(seen, []int{2, 2, 2}) {
		t.Errorf("list --page-size 2 over 5 records asked for pages %v, want [2 2 2]", seen)
	}
	c.want(exitUsage, "list", "--page-size", "-1")
}
