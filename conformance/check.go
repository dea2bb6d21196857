package conformance

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"nameservice.dev/nameservice/internal/driverutil"
)

// T is what a case needs of its test: *testing.T, or Check's runner.
type T interface {
	Helper()
	Name() string
	Error(args ...any)
	Errorf(format string, args ...any)
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Skip(args ...any)
	Cleanup(f func())
}

// CheckOptions configure Check.
type CheckOptions struct {
	// Prefix is put before every ID the suite writes (each case works under
	// Prefix + a random segment + "/"); it should end in "/" and hold nothing.
	Prefix string
	// Quick runs only the cases marked quick: a subset that covers every
	// group's guarantee in seconds.
	Quick bool
	// Groups, when not empty, names the groups to run (GroupNames lists
	// them); a name no group has is reported as a failed group.
	Groups      []string
	CaseTimeout time.Duration // bounds each case (default 5 minutes)
	// LeaseTTL is the TTL of the lease cases' leases (default 3 s): a store
	// across a network needs room for a refresh within it.
	LeaseTTL time.Duration
	// Progress, when set, is called after each group with its result.
	Progress func(GroupResult)
}

// Status is the outcome of one case.
type Status string

// Outcomes of a case.
const (
	Pass Status = "pass"
	Fail Status = "fail"
	Skip Status = "skip"
)

// CaseResult is the outcome of one case.
type CaseResult struct {
	Name     string
	Status   Status
	Duration time.Duration
	Message  string // why it failed or was skipped
}

// GroupResult is the outcome of one group of cases.
type GroupResult struct {
	Name      string
	Guarantee string // what the group checks
	Cases     []CaseResult
	Duration  time.Duration
	Skipped   string // set when the whole group was skipped: why
}

// Failed reports whether a case of the group failed.
func (g GroupResult) Failed() bool { return g.Count(Fail) > 0 }

// Count returns how many cases ended with status s.
func (g GroupResult) Count(s Status) int {
	n := 0
	for _, c := range g.Cases {
		if c.Status == s {
			n++
		}
	}
	return n
}

// Report is the outcome of Check.
type Report struct {
	Groups      []GroupResult
	Duration    time.Duration
	Interrupted bool // the context ended before every case ran
}

// Failed reports whether any case failed or the run was interrupted.
func (r Report) Failed() bool {
	return r.Interrupted || slices.ContainsFunc(r.Groups, GroupResult.Failed)
}

// Check runs the suite against the store open reaches, from a program
// rather than go test: each case in a goroutine of its own, bounded by
// CaseTimeout, under opts.Prefix. Groups that must corrupt records are
// skipped. Check stops starting cases when ctx ends and marks the rest
// skipped. The caller purges what the cases wrote under opts.Prefix.
func Check(ctx context.Context, open Opener, opts CheckOptions) Report {
	opts.CaseTimeout = driverutil.Positive(opts.CaseTimeout, testTimeout)
	opts.LeaseTTL = driverutil.Positive(opts.LeaseTTL, checkLeaseTTL)
	start := time.Now()
	rep := Report{Groups: unknownGroups(opts.Groups)}
	for _, g := range checkOrder() {
		if len(opts.Groups) > 0 && !slices.Contains(opts.Groups, g.name) {
			continue
		}
		res, interrupted := checkGroup(ctx, g, open, opts)
		rep.Interrupted = rep.Interrupted || interrupted
		if len(res.Cases) == 0 {
			continue
		}
		rep.Groups = append(rep.Groups, res)
		if opts.Progress != nil {
			opts.Progress(res)
		}
	}
	rep.Duration = time.Since(start)
	return rep
}

// checkGroup runs g's cases, one after another except a light group's,
// which run at once. interrupted says that ctx ended before every case ran.
func checkGroup(ctx context.Context, g group, open Opener, opts CheckOptions) (res GroupResult, interrupted bool) {
	// Room for every case, so that the results the goroutines write stay put.
	res = GroupResult{Name: g.name, Guarantee: g.guarantee, Cases: make([]CaseResult, 0, len(g.cases))}
	start := time.Now()
	var wg sync.WaitGroup
	for _, c := range g.cases {
		if opts.Quick && !c.quick && !g.needsCorrupter {
			continue
		}
		switch {
		case g.needsCorrupter:
			res.Cases = append(res.Cases, CaseResult{Name: c.name, Status: Skip, Message: "needs a harness that corrupts records; a live store cannot be corrupted safely"})
		case ctx.Err() != nil:
			interrupted = true
			res.Cases = append(res.Cases, CaseResult{Name: c.name, Status: Skip, Message: "not run: " + context.Cause(ctx).Error()})
		case g.light:
			res.Cases = append(res.Cases, CaseResult{})
			r := &res.Cases[len(res.Cases)-1]
			wg.Go(func() { *r = runCase(ctx, g.name+"/"+c.name, c, open, opts) })
		default:
			res.Cases = append(res.Cases, runCase(ctx, g.name+"/"+c.name, c, open, opts))
		}
	}
	wg.Wait()
	interrupted = interrupted || slices.ContainsFunc(res.Cases, func(c CaseResult) bool { return strings.HasPrefix(c.Message, interruptedCase) })
	if g.needsCorrupter {
		res.Skipped = "a live store cannot be corrupted safely; the drivers' own tests run this group"
	}
	res.Duration = time.Since(start)
	return res, interrupted
}

// GroupNames returns the names of the suite's groups, in Check's order.
func GroupNames() []string {
	var names []string
	for _, g := range checkOrder() {
		names = append(names, g.name)
	}
	return names
}

// unknownGroups returns a failed result for each name no group has.
func unknownGroups(names []string) []GroupResult {
	var res []GroupResult
	for _, n := range names {
		if !slices.Contains(GroupNames(), n) {
			res = append(res, GroupResult{Name: n, Cases: []CaseResult{{Name: "Select", Status: Fail,
				Message: "the suite has no group of that name; its groups: " + strings.Join(GroupNames(), ", ")}}})
		}
	}
	return res
}

// checkOrder returns the groups with Lease last: its cases time a lease,
// which a store still warming up (a cold JVM, a new table) can miss.
func checkOrder() []group {
	i := slices.IndexFunc(groups, func(g group) bool { return g.name == "Lease" })
	return append(slices.Delete(slices.Clone(groups), i, i+1), groups[i])
}

const (
	checkLeaseTTL = 3 * time.Second // Check's default lease TTL
	// caseGrace is how long Check waits, past the case's timeout, for a
	// case to end before it reports it hung and goes on without it.
	caseGrace = 10 * time.Second
)

// interruptedCase starts the message of a case the interrupt stopped.
const interruptedCase = "interrupted while it ran: "

func runCase(runCtx context.Context, name string, c testCase, open Opener, opts CheckOptions) CaseResult {
	timeout := c.timeout(opts.CaseTimeout)
	ctx, cancel := context.WithTimeout(runCtx, timeout)
	defer cancel()
	t := &checkT{name: name}
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer t.runCleanups()
		defer func() {
			if r := recover(); r != nil {
				t.record(Fail, fmt.Sprintf("panic: %v", r))
			}
		}()
		e := newEnv(ctx, t, open, nil, opts.Prefix+"ct"+randomHex(6)+"/")
		e.leaseTTL = opts.LeaseTTL
		c.run(e)
	}()
	select {
	case <-done:
	case <-time.After(timeout + caseGrace):
		t.record(Fail, fmt.Sprintf("did not end within %v", timeout+caseGrace))
	}
	res := t.result(c.name, time.Since(start))
	if res.Status == Fail && runCtx.Err() != nil {
		// Stopped by the interrupt, the case's failure says nothing of the
		// store: not a broken guarantee (Check reports the run interrupted).
		res.Status, res.Message = Skip, interruptedCase+context.Cause(runCtx).Error()+" ("+res.Message+")"
	}
	return res
}

// checkT is the T of a case run by Check. As on testing.T, Fatal and Skip
// end the calling goroutine.
type checkT struct {
	name     string
	mu       sync.Mutex
	status   Status
	msgs     []string
	cleanups []func()
}

func (t *checkT) Helper()      {}
func (t *checkT) Name() string { return t.name }

func (t *checkT) Error(args ...any) { t.record(Fail, fmt.Sprint(args...)) }
func (t *checkT) Errorf(format string, args ...any) {
	t.record(Fail, fmt.Sprintf(format, args...))
}

func (t *checkT) Fatal(args ...any) { t.Error(args...); runtime.Goexit() }
func (t *checkT) Fatalf(format string, args ...any) {
	t.Errorf(format, args...)
	runtime.Goexit()
}

func (t *checkT) Skip(args ...any) { t.record(Skip, fmt.Sprint(args...)); runtime.Goexit() }

func (t *checkT) Cleanup(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cleanups = append(t.cleanups, f)
}

// record notes a failure or skip; a failure outranks a skip.
func (t *checkT) record(s Status, msg string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.status != Fail {
		t.status = s
	}
	t.msgs = append(t.msgs, msg)
}

func (t *checkT) runCleanups() {
	t.mu.Lock()
	fs := t.cleanups
	t.cleanups = nil
	t.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}

func (t *checkT) result(name string, d time.Duration) CaseResult {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := cmp.Or(t.status, Pass)
	return CaseResult{Name: name, Status: s, Duration: d, Message: strings.Join(t.msgs, "; ")}
}
