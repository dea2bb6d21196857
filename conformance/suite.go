package conformance

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/model"
)

// Run runs the whole suite against the stores h makes. Every test gets a
// store of its own (or its own ID prefix on a shared one), and the tests
// run in parallel (each waits on its store, seldom on the processor), or
// with -failfast one at a time, in order. Its long cases are played short
// unless the environment variable LongEnv is set.
func Run(t *testing.T, h Harness) {
	t.Helper()
	RunGroups(t, h)
}

// RunGroups runs the named groups of the suite (all of them when none is
// named) as Run does, for a driver that runs some groups again on a store
// set up otherwise. It fails on a name no group has.
func RunGroups(t *testing.T, h Harness, names ...string) {
	t.Helper()
	for _, n := range names {
		if !slices.ContainsFunc(groups, func(g group) bool { return g.name == n }) {
			t.Fatalf("conformance: no group %q", n)
		}
	}
	ordered := !failFast()
	order := slices.Clone(groups)
	if ordered { // the groups with a long case first, so that the longest cases do not start last
		slices.SortStableFunc(order, func(a, b group) int { return cmp.Compare(short(a), short(b)) })
	}
	for _, group := range order {
		if len(names) > 0 && !slices.Contains(names, group.name) {
			continue
		}
		t.Run(group.name, func(t *testing.T) {
			if ordered {
				t.Parallel()
			}
			// A light group's cases mostly wait (a lease's TTL): they run all
			// at once, not queued for the -parallel slots the other cases share.
			together := group.light && ordered
			var wg sync.WaitGroup
			for _, c := range group.cases {
				run := func() { // t.Run may be called from several goroutines at once
					t.Run(c.name, func(t *testing.T) {
						if ordered && !together {
							t.Parallel()
						}
						defer hold(group)()
						c.run(newTestEnv(t, h, c.runTimeout()))
					})
				}
				if together {
					wg.Go(run)
				} else {
					run()
				}
			}
			wg.Wait()
		})
	}
}

// running admits the cases of every suite Run runs in the test process
// (see group.alone and group.light).
var running gate

// hold waits for g's case's turn and returns its release.
func hold(g group) (release func()) {
	if !g.alone {
		return running.enter("", false)
	}
	return running.enter(g.name, !g.light)
}

// short is 0 for a group with a long case, 1 for the others.
func short(g group) int {
	if slices.ContainsFunc(g.cases, func(c testCase) bool { return c.long }) {
		return 0
	}
	return 1
}

// failFast reports whether go test runs with -failfast (parallel tests
// already begun would run on after the first failure).
func failFast() bool {
	f := flag.Lookup("test.failfast")
	return f != nil && f.Value.String() == "true"
}

type testCase struct {
	name string
	run  func(e *env)
	// quick puts the case in the subset CheckOptions.Quick runs.
	quick bool
	// long: the case plays hundreds of rounds, which a store on a busy host
	// takes minutes for; it gets longCaseFactor times the usual timeout.
	long bool
}

const longCaseFactor = 4

// runTimeout is the case's timeout in Run, three times as long for a long
// case played at full length (LongEnv: five times the rounds). It only
// stops a run that hangs: a loaded CI machine took 480 s for 95 of 200
// rounds through ns serve over DynamoDB Local.
func (c testCase) runTimeout() time.Duration {
	if c.long && os.Getenv(LongEnv) != "" {
		return 3 * c.timeout(testTimeout)
	}
	return c.timeout(testTimeout)
}

// timeout returns the case's share of base.
func (c testCase) timeout(base time.Duration) time.Duration {
	if c.long {
		return base * longCaseFactor
	}
	return base
}

type group struct {
	name string
	// guarantee is what the group checks, as a failure names it.
	guarantee string
	// needsCorrupter: every case corrupts records, which only a harness
	// (never a live deployment) can do.
	needsCorrupter bool
	// alone: its cases time leases or the protocol's windows, which a busy
	// machine can miss, or flood the store (starving the other cases on a
	// one-threaded emulator); Run runs each with no other case of any suite.
	alone bool
	// light: its cases mostly wait, adding next to no load, so a group alone
	// and light runs its cases all at once, beside those of the same group
	// of the process's other suites.
	light bool
	cases []testCase
}

// optional returns g for an optional capability of the driver, which has
// reports on: without it each case checks instead that unsupported's call
// answers ErrUnsupported.
func optional(has func(*nameservice.NameService) bool, unsupported func(e *env) error, g group) group {
	g.cases = slices.Clone(g.cases)
	for i := range g.cases {
		run := g.cases[i].run
		g.cases[i].run = func(e *env) {
			if !has(e.ns) {
				e.wantErr(unsupported(e), nameservice.ErrUnsupported)
				return
			}
			run(e)
		}
	}
	return g
}

// has reports whether ns's driver has capability C (driver.Brancher, ...).
func has[C any](ns *nameservice.NameService) bool {
	var c C
	return ns.As(&c)
}

// groups is the suite, in the order it is listed.
var groups = []group{
	groupLifecycle, groupIDs, groupImport,
	groupPublish, groupCompareAndSetRef, groupPushStatus, groupPushConfig, groupGraphSource, groupNamedGraphs,
	groupLimits, groupRules, groupList, groupSelect, groupHeads,
	groupConcurrency, groupPurgeRacesCreate, groupContext,
	groupWatch, groupSubscribe, groupLease,
	groupBranches, groupCollect, groupCommitIndex, groupUnreadable,
}

// clock is the suite's clients' fixed time, to check created_at exactly.
var clock = time.Unix(1_700_000_000, 0)

// testTimeout bounds each test, so a driver that hangs fails instead of
// stalling the run; the heaviest cases (racing writers in S3's lock mode)
// took over two minutes on a loaded two-core machine.
const testTimeout = 5 * time.Minute

type env struct {
	t        T
	ctx      context.Context
	open     Opener
	corrupt  CorruptFunc // nil when the harness is no Corrupter
	ns       *nameservice.NameService
	prefix   string
	leaseTTL time.Duration // the TTL of the lease cases' leases
	// listingSettles bounds how long a listing may take to show a write.
	listingSettles time.Duration
	purgeRounds    int // how many rounds PurgeRacesCreate plays
}

// newTestEnv prepares a store from h for one go test bounded by timeout.
func newTestEnv(t *testing.T, h Harness, timeout time.Duration) *env {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	var open Opener
	var corrupt CorruptFunc
	var err error
	c, corrupter := h.(Corrupter)
	if corrupter {
		open, corrupt, err = c.NewCorruptibleStore(ctx, t)
	} else {
		open, err = h.NewStore(ctx, t)
	}
	if err != nil {
		t.Fatalf("harness: new store: %v", err)
	}
	if corrupter && corrupt == nil {
		// A Corrupter promises the unreadable-record cases; a nil func would skip them.
		t.Fatal("harness: NewCorruptibleStore returned a nil CorruptFunc")
	}
	e := newEnv(ctx, t, open, corrupt, "ct"+randomHex(6)+"/")
	if os.Getenv(LongEnv) == "" {
		e.purgeRounds = shortPurgeRaceRounds
	}
	if ls, ok := h.(ListingSettler); ok {
		e.listingSettles = ls.ListingSettles()
	}
	return e
}

// newEnv returns the environment of one case: its records go under prefix.
func newEnv(ctx context.Context, t T, open Opener, corrupt CorruptFunc, prefix string) *env {
	e := &env{t: t, ctx: ctx, open: open, corrupt: corrupt, prefix: prefix, leaseTTL: leaseTTL, listingSettles: listingSettles, purgeRounds: purgeRaceRounds}
	e.ns = e.client()
	return e
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// client opens a new independent client of the test's store.
func (e *env) client() *nameservice.NameService {
	e.t.Helper()
	d, err := e.open(e.ctx)
	if err != nil {
		e.t.Fatalf("harness: open client: %v", err)
	}
	ns := nameservice.New(d, nameservice.WithClock(func() time.Time { return clock }))
	e.t.Cleanup(func() { _ = ns.Close() })
	return ns
}

// id returns an ID under the test's prefix: id("db") is "ctXXXX/db".
func (e *env) id(name string) string { return e.prefix + name }

func (e *env) must(err error) {
	e.t.Helper()
	if err != nil {
		e.t.Fatalf("unexpected error: %v", err)
	}
}

func (e *env) init(names ...string) {
	e.t.Helper()
	for _, n := range names {
		e.must(e.ns.Init(e.ctx, e.id(n)))
	}
}

// initAt creates ledger name with its head published at c<t>, t.
func (e *env) initAt(name string, t int64) {
	e.t.Helper()
	e.init(name)
	e.publish(name, t)
}

// publish publishes c<t> at t as the head of name, and fails unless applied.
func (e *env) publish(name string, t int64) {
	e.t.Helper()
	addr := fmt.Sprint("c", t)
	e.applied(ref(addr, t))(e.ns.PublishCommit(e.ctx, e.id(name), t, addr))
}

func (e *env) lookup(name string) *nameservice.Record {
	e.t.Helper()
	r, err := e.ns.Lookup(e.ctx, e.id(name))
	e.must(err)
	return r
}

func (e *env) graphSource(name string, config any) {
	e.t.Helper()
	e.must(e.ns.PublishGraphSource(e.ctx, e.id(name), "db:Bm25Index", nil, config))
}

// wantErr fails unless err wraps target.
func (e *env) wantErr(err, target error) {
	e.t.Helper()
	if !errors.Is(err, target) {
		e.t.Fatalf("error = %v, want one wrapping %q", err, target)
	}
}

// applied returns a check that fails unless the push was applied and
// reports want as current: e.applied(want)(ns.PublishCommit(...)).
func (e *env) applied(want nameservice.Value) func(nameservice.Outcome, error) {
	return func(out nameservice.Outcome, err error) {
		e.t.Helper()
		e.must(err)
		if !out.Applied {
			e.t.Fatalf("not applied; current %v, want applied %v", out.Current, want)
		}
		if !out.Current.Equal(want) {
			e.t.Fatalf("applied, but outcome current = %v, want %v", out.Current, want)
		}
	}
}

// rejected returns a check that fails unless the push was rejected with current.
func (e *env) rejected(current nameservice.Value) func(nameservice.Outcome, error) {
	return func(out nameservice.Outcome, err error) {
		e.t.Helper()
		e.must(err)
		if out.Applied {
			e.t.Fatalf("applied, want not applied with current %v", current)
		}
		if !out.Current.Equal(current) {
			e.t.Fatalf("not applied with current %v, want current %v", out.Current, current)
		}
	}
}

// wantValue fails unless concern c of name is want.
func (e *env) wantValue(name string, c nameservice.Concern, want nameservice.Value) {
	e.t.Helper()
	got := e.lookup(name).Value(c)
	if got == nil {
		e.t.Fatalf("%s of %s is absent, want %v", c, name, want)
	}
	if !got.Equal(want) {
		e.t.Fatalf("%s of %s = %v, want %v", c, name, *got, want)
	}
}

func (e *env) wantAbsent(name string) {
	e.t.Helper()
	e.wantErr(second(e.ns.Lookup(e.ctx, e.id(name))), nameservice.ErrNotFound)
}

// listingSettles is how long a listing may take to show what was written:
// DynamoDB's GSI converges in well under a second, a loaded machine's in
// seconds.
const listingSettles = 30 * time.Second

// listIDs lists under the test's prefix, waiting up to listingSettles for
// the listing to equal want (an eventually consistent index must converge
// to exactly the right records); no listing may hold one that opts does
// not select.
func (e *env) listIDs(opts nameservice.ListOptions, want ...string) []*nameservice.Record {
	e.t.Helper()
	entry := func(opts nameservice.ListOptions, r *nameservice.Record, err error) string {
		e.must(err)
		if !opts.Matches(r) {
			// A listing may miss a change for a moment (an index), but
			// never hold a record it does not select (a stale entry).
			e.t.Fatalf("list %+v holds %s, which it does not select: %s", opts, r.ID, js(r))
		}
		return r.ID.String()
	}
	return e.listUntil(opts, e.ids(want...), entry)
}

// listUntil lists under the test's prefix until the entries (entry's of
// each record or error) equal want, failing after listingSettles, and
// returns the records of the last listing.
func (e *env) listUntil(opts nameservice.ListOptions, want []string,
	entry func(nameservice.ListOptions, *nameservice.Record, error) string) []*nameservice.Record {
	e.t.Helper()
	opts.Prefix = e.prefix + opts.Prefix
	for deadline := time.Now().Add(e.listingSettles); ; time.Sleep(100 * time.Millisecond) {
		var got []string
		var recs []*nameservice.Record
		for r, err := range e.ns.List(e.ctx, opts) {
			got = append(got, entry(opts, r, err))
			if err == nil {
				recs = append(recs, r)
			}
		}
		if slices.Equal(got, want) {
			return recs
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("list %+v = %q, want %q", opts, got, want)
		}
	}
}

// parseID returns the ID of name under the test's prefix.
func (e *env) parseID(name string) nameservice.ID {
	e.t.Helper()
	id, err := model.ParseID(e.id(name))
	if err != nil {
		e.t.Fatalf("bad test id %q: %v", name, err)
	}
	return id
}

// ids returns the normalised IDs of names under the test's prefix.
func (e *env) ids(names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = e.parseID(n).String()
	}
	return out
}

func ref(addr string, t int64) nameservice.Value { return nameservice.RefValue(addr, t) }

var status = nameservice.StatusValue

func config(v int64, p nameservice.Object) nameservice.Value {
	return nameservice.Value{V: v, Payload: p}
}

var (
	unborn = nameservice.Value{}
	ready  = status(1, "ready", nil)
)

// raceWins runs op with k clients at once, each its own, and returns how
// many succeeded; each other must fail with an error wrapping lost.
func raceWins(e *env, k int, lost error, op func(c *nameservice.NameService) error) int64 {
	var won atomic.Int64
	runParallel(e, k, func(i int, c *nameservice.NameService) {
		switch err := op(c); {
		case err == nil:
			won.Add(1)
		case !errors.Is(err, lost):
			e.t.Errorf("client %d: %v", i, err)
		}
	})
	return won.Load()
}

// runParallel runs fn(i, client) for i in [0,k) at once, each with a client of its own.
func runParallel(e *env, k int, fn func(i int, c *nameservice.NameService)) {
	clients := make([]*nameservice.NameService, k)
	for i := range clients {
		clients[i] = e.client()
	}
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Go(func() { fn(i, c) })
	}
	wg.Wait()
}
