package robustness

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Chaos is a client of the workload that acts inside the window where a
// write has landed but its client has not yet heard so: it reads the
// record, then mostly purges it (and two times in three creates it again,
// by Init or by a bootstrapping compare-and-set), else writes to it twice.
// Its operations are recorded in the history like any other client's, so
// the check sees the lost write, the purge and the create interleaved as
// they happened.
//
// A fault proxy opens the windows: give it Lose as faultproxy.Config.Lose.
// For a store no proxy can stand in front of (files), set Interval instead:
// the client then acts on a random ID every Interval on average.
//
// The workload's IDs must have distinct ledger names: Lose finds the ID a
// write was about by its ledger name in the request's path, query or body.
type Chaos struct {
	// Open opens the chaos client: its requests must not pass the proxy
	// that loses answers (they would open windows of their own).
	Open Opener
	// Rate is the share of the writes answered with success whose answer
	// is lost while the client acts.
	Rate float64
	// Interval, when positive, makes the client act on its own, every
	// Interval on average.
	Interval time.Duration
	// Seed seeds the client's choices.
	Seed uint64

	window sync.Mutex   // held while the client acts: one window at a time
	run    atomic.Value // *chaosRun while a workload runs
	draws  struct {
		sync.Mutex
		rnd *rand.Rand
	}
	windows, purged, created atomic.Int64
}

// chaosRun is the client of one workload.
type chaosRun struct {
	ctx     context.Context
	h       *History
	c       *client
	matches map[string]*regexp.Regexp // ID -> its ledger name in a request
}

// start opens the client as client w.Clients of h, and returns the function
// that stops it once every window has closed.
func (x *Chaos) start(ctx context.Context, h *History, w Workload) (func(), error) {
	c, err := newClient(ctx, x.Open, w, w.Clients)
	if err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	c.rnd = rand.New(rand.NewPCG(x.Seed, 0xc4a05))
	matches, err := ledgerPatterns(c.ids)
	if err != nil {
		_ = c.ns.Close()
		return nil, err
	}
	x.draws.Lock()
	x.draws.rnd = rand.New(rand.NewPCG(x.Seed, 0x1055))
	x.draws.Unlock()
	run := &chaosRun{ctx: ctx, h: h, c: c, matches: matches}
	x.run.Store(run)
	tick, stopTick := context.WithCancel(ctx)
	var ticking sync.WaitGroup
	if x.Interval > 0 {
		ticking.Go(func() { x.tick(tick, run) })
	}
	return func() {
		x.run.Store((*chaosRun)(nil))
		stopTick()
		ticking.Wait()
		x.window.Lock() // a window still open (its lossy client gave up waiting) closes first
		defer x.window.Unlock()
		_ = c.ns.Close()
	}, nil
}

// ledgerPatterns returns, per ID, the pattern of its ledger name as a
// request names it: plain (a DynamoDB key, a path) or percent-encoded (a
// document key).
func ledgerPatterns(ids []string) (map[string]*regexp.Regexp, error) {
	m := map[string]*regexp.Regexp{}
	owner := map[string]string{}
	for _, id := range ids {
		ledger, _, _ := strings.Cut(id, ":")
		if other, ok := owner[ledger]; ok {
			return nil, fmt.Errorf("chaos: IDs %s and %s share a ledger name: a request cannot tell them apart", other, id)
		}
		owner[ledger] = id
		m[id] = regexp.MustCompile(`(?:` + regexp.QuoteMeta(ledger) + `|` + regexp.QuoteMeta(url.PathEscape(ledger)) + `)(?:[^A-Za-z0-9_-]|$)`)
	}
	return m, nil
}

// Lose is a faultproxy.Config.Lose: for a share Rate of the writes, it
// acts on the record the write was about, then has the write's answer
// lost.
func (x *Chaos) Lose(r *http.Request) bool {
	run, _ := x.run.Load().(*chaosRun)
	if run == nil || !x.draw() {
		return false
	}
	body, _ := io.ReadAll(r.Body)
	query, _ := url.QueryUnescape(r.URL.RawQuery) // GCS names an object in the query
	id := run.target(r.URL.Path + "\n" + query + "\n" + string(body))
	if id == "" || !x.window.TryLock() {
		return false
	}
	defer x.window.Unlock()
	if now, _ := x.run.Load().(*chaosRun); now != run {
		return false // the workload ended meanwhile
	}
	x.act(run, id)
	return true
}

func (x *Chaos) draw() bool {
	x.draws.Lock()
	defer x.draws.Unlock()
	return x.draws.rnd != nil && x.draws.rnd.Float64() < x.Rate
}

// target returns the ID whose ledger a request names, or "".
func (run *chaosRun) target(req string) string {
	for id, re := range run.matches {
		if re.MatchString(req) {
			return id
		}
	}
	return ""
}

// tick acts on a random ID at random moments until ctx ends.
func (x *Chaos) tick(ctx context.Context, run *chaosRun) {
	for {
		x.window.Lock()
		pause := time.Duration(run.c.rnd.Int64N(2 * int64(x.Interval)))
		id := run.c.ids[run.c.rnd.IntN(len(run.c.ids))]
		x.window.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		x.window.Lock()
		x.act(run, id)
		x.window.Unlock()
	}
}

// act is what the client does in one window, on id: read it (the lost
// write shows, when it landed); then purge it, and create it again two
// times in three, or else write to it twice. Three windows in five purge,
// the first always: a short run (files take a tenth of a second) still
// has a purge in its history.
func (x *Chaos) act(run *chaosRun, id string) {
	x.windows.Add(1)
	c, ctx, h := run.c, run.ctx, run.h
	c.act(ctx, h, id, Lookup)
	if c.rnd.IntN(5) < 3 || x.purged.Load() == 0 {
		c.act(ctx, h, id, Purge)
		x.purged.Add(1)
		if c.rnd.IntN(3) != 0 {
			c.act(ctx, h, id, Create)
			x.created.Add(1)
		}
		return
	}
	for range 2 {
		c.act(ctx, h, id, []Kind{PublishCommit, PublishIndex, AdminIndex, CASRef, PushStatus, PushConfig}[c.rnd.IntN(6)])
	}
}

// Windows returns how many windows the client acted in, how many of them
// it purged the record in, and how many of those it created it again in.
func (x *Chaos) Windows() (windows, purged, created int64) {
	return x.windows.Load(), x.purged.Load(), x.created.Load()
}

// String summarises the windows.
func (x *Chaos) String() string {
	w, p, c := x.Windows()
	return fmt.Sprintf("%d windows: %d purged, %d of them created again", w, p, c)
}

// TestChaosFindsTheRecord: the chaos client tells which of the workload's
// IDs a request writes, in the forms the stores' requests name it.
func TestChaosFindsTheRecord(t *testing.T) {
	m, err := ledgerPatterns(workload(1).all())
	if err != nil {
		t.Fatal(err)
	}
	run := &chaosRun{matches: m}
	cases := map[string]string{
		`{"Key":{"pk":{"S":"rb/a:main"},"sk":{"S":"head"}}}`:                 "rb/a",     // DynamoDB
		"/bucket/ns@v2/rb/b/dev.json":                                        "rb/b:dev", // S3, Azure
		`{"Item":{"key":{"S":"ns@v2/rb/fresh/main.json"}}}`:                  "rb/fresh", // docstore
		"/ns/v1/push/head/rb/a:main":                                         "rb/a",     // ns serve
		"/upload/storage/v1/b/bucket/o\nname=ns@v2/rb/fresh/main.index.json": "rb/fresh", // GCS
		"/ns/v1/push/head/rb/ab:main":                                        "",         // another ledger
	}
	for req, want := range cases {
		if got := run.target(req); got != want {
			t.Errorf("%q: got %q, want %q", req, got, want)
		}
	}
	if _, err := ledgerPatterns([]string{"x/y", "x/y:dev"}); err == nil {
		t.Error("IDs of one ledger were accepted")
	}
}
