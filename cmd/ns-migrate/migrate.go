package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/connconfig"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/cli"
	"nameservice.dev/nameservice/internal/otelexport"
)

// migrate runs the copy (or plan) pass and then, if asked, the verify pass.
// ok is false when a record failed, conflicted or differs, or when the run
// was interrupted.
func migrate(ctx context.Context, o *options, stdout, stderr io.Writer) (ok bool, err error) {
	ex, err := otelexport.Start(ctx, o.otlpEndpoint, "ns-migrate")
	if err != nil {
		return false, usagef("%v", err)
	}
	defer ex.Shutdown(stderr, "ns-migrate")
	if ex != nil {
		o.tracer = ex.Tracer.Tracer("nameservice.dev/nameservice/cmd/ns-migrate")
	}
	src, err := openSide(ctx, "--from", o.from, o.fromConfig, ex.Options()...)
	if err != nil {
		return false, err
	}
	defer src.Close()
	// A missing directory would read as an empty nameservice, copied and
	// verified without a failure.
	if err := cli.MissingStore(src, "check the URL"); err != nil {
		return false, fmt.Errorf("--from: %w", err)
	}
	dst, err := openSide(ctx, "--to", o.to, o.toConfig, ex.Options()...)
	if err != nil {
		return false, err
	}
	defer dst.Close()
	if err := prepareTarget(ctx, dst, o); err != nil {
		return false, err
	}
	if o.resume != "" {
		if o.sel.done, err = readDone(o.resume); err != nil {
			return false, cli.UsageError{Msg: err.Error()}
		}
	}
	rep, err := openReport(o.report, sameFile(o.report, o.resume))
	if err != nil {
		return false, err
	}
	ok = true
	if !o.verifyOnly {
		ok = copyPass(ctx, o, src, dst, rep, stdout, stderr)
	}
	if (o.verify || o.verifyOnly) && ctx.Err() == nil {
		o.sel.done = nil // verify everything, resumed or not
		ok = verifyPass(ctx, o, src, dst, rep, stdout, stderr) && ok
	}
	if err := rep.close(); err != nil {
		return false, err
	}
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "ns-migrate: interrupted: records in flight were finished, none was started after the signal; run again (with --resume REPORT to skip the finished ones)")
		return false, nil
	}
	return ok, nil
}

// openSide opens one side from its URL or its connection config.
func openSide(ctx context.Context, flagName, rawURL, configFile string, opts ...nameservice.Option) (*nameservice.NameService, error) {
	open := nameservice.Open
	if configFile != "" {
		open, rawURL, flagName = connconfig.Open, configFile, flagName+"-config"
	}
	ns, err := open(ctx, rawURL, opts...)
	if errors.Is(err, nameservice.ErrInvalidArgument) || errors.Is(err, nameservice.ErrUnsupported) || errors.Is(err, fs.ErrNotExist) {
		return nil, usagef("%s: %v", flagName, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flagName, err)
	}
	return ns, nil
}

// sameFile reports whether the paths a and b (neither empty) name one
// file, however each is spelled.
func sameFile(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	if a == b {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// prepareTarget creates the target's table with --create-table, then reads
// one page of the target so that a missing table or a wrong endpoint is one
// clear error before any record is touched.
func prepareTarget(ctx context.Context, dst *nameservice.NameService, o *options) error {
	// driver.Provisioner, the capability of every driver with a table to
	// create, keeps this command free of backend-specific code.
	var p driver.Provisioner
	canCreate := dst.As(&p)
	if o.createTable && !canCreate { // refused in a dry run too: it plans the run as given
		return usagef("--create-table: the target's driver has no table to create")
	}
	if o.createTable && !o.dryRun {
		if err := dst.Provision(ctx); err != nil {
			return fmt.Errorf("--create-table: %w", err)
		}
	}
	_, err := dst.ListPage(ctx, nameservice.ListOptions{PageSize: 1, IncludeRetracted: true})
	if err == nil || errors.Is(err, nameservice.ErrInternal) {
		return nil // a record the target cannot decode is that record's problem
	}
	if canCreate && !o.createTable {
		return fmt.Errorf("the target cannot be read: %w (pass --create-table to create its table)", err)
	}
	return fmt.Errorf("the target cannot be read: %w", err)
}

// outcome is what happened to one record in a pass.
type outcome struct {
	id     string
	action string // an action, or "verify"
	result string
	err    error
	diff   string // verify: how the records differ
}

// runPass streams the selected source records through o.parallel workers
// and hands each outcome to t. The channels are bounded, so memory does not
// grow with the number of records. Once ctx is done no record is started;
// those in flight finish (their writes use a context that is not canceled).
func runPass(ctx context.Context, o *options, src *nameservice.NameService, work func(context.Context, item) outcome, t *tally) {
	items := make(chan item, 2*o.parallel)
	results := make(chan outcome, 2*o.parallel)
	go o.sel.scan(ctx, src, items)
	workCtx := context.WithoutCancel(ctx)
	var wg sync.WaitGroup
	for range o.parallel {
		wg.Go(func() {
			for it := range items {
				if ctx.Err() == nil {
					results <- o.traced(workCtx, it, work)
				}
			}
		})
	}
	go func() {
		wg.Wait()
		close(results)
	}()
	t.collect(results)
}

// traced runs work on one record in a span of its own, when tracing.
func (o *options) traced(ctx context.Context, it item, work func(context.Context, item) outcome) outcome {
	if o.tracer == nil {
		return work(ctx, it)
	}
	ctx, span := o.tracer.Start(ctx, "migrate record", trace.WithAttributes(attribute.String("nameservice.record.id", it.id)))
	defer span.End()
	r := work(ctx, it)
	span.SetAttributes(attribute.String("nameservice.migrate.action", r.action), attribute.String("nameservice.migrate.result", r.result))
	if r.err != nil {
		span.SetStatus(codes.Error, r.err.Error())
	}
	return r
}

func copyPass(ctx context.Context, o *options, src, dst *nameservice.NameService, rep *reporter, stdout, stderr io.Writer) bool {
	c := &copier{dst: dst}
	name := "copy"
	if o.dryRun {
		name = "plan"
	}
	t := newTally(name, o, rep, stdout, stderr)
	runPass(ctx, o, src, func(ctx context.Context, it item) outcome {
		if it.err != nil {
			return outcome{id: it.id, action: string(actFailed), result: resultFailed, err: it.err}
		}
		act, err := c.copyRecord(ctx, it.rec, o.dryRun)
		return outcome{id: it.id, action: string(act), result: resultOf(act, o.dryRun), err: err}
	}, t)
	return t.finish()
}

func resultOf(a action, dryRun bool) string {
	switch {
	case a == actConflict:
		return resultConflict
	case a == actFailed:
		return resultFailed
	case dryRun:
		return resultPlanned
	}
	return resultDone
}

// tally counts outcomes, writes the report and the progress, and prints
// the records that need attention (every record's plan with --dry-run).
type tally struct {
	name           string
	o              *options
	rep            *reporter
	stdout, stderr io.Writer
	counts         map[string]int
	n              int
	start          time.Time
	bar            *progressbar.ProgressBar // invisible unless on a terminal
	onTerminal     bool
	reportErr      error
}

func newTally(name string, o *options, rep *reporter, stdout, stderr io.Writer) *tally {
	t := &tally{name: name, o: o, rep: rep, stdout: stdout, stderr: stderr, counts: map[string]int{}, start: time.Now()}
	t.bar, t.onTerminal = newBar(name, stderr)
	return t
}

func (t *tally) collect(results <-chan outcome) {
	tick := time.NewTicker(t.o.progressEvery)
	defer tick.Stop()
	for {
		select {
		case r, ok := <-results:
			if !ok {
				return
			}
			t.add(r)
		case <-tick.C:
			if !t.onTerminal {
				fmt.Fprintln(t.stderr, t.line())
			}
		}
	}
}

func (t *tally) add(r outcome) {
	t.n++
	key := r.result
	if t.name != "verify" {
		key = r.action
	}
	t.counts[key]++
	t.print(r)
	l := reportLine{ID: r.id, Action: r.action, Result: r.result}
	if r.err != nil {
		l.Error = r.err.Error()
	}
	if err := t.rep.write(l); err != nil && t.reportErr == nil {
		t.reportErr = err
	}
	_ = t.bar.Add(1)
}

func (t *tally) print(r outcome) {
	id := cmp.Or(r.id, "(no record)")
	var s string
	switch {
	case r.diff != "":
		s = fmt.Sprintf("%s %s: the target differs (-source +target):\n%s", r.result, id, r.diff)
	case r.err != nil:
		s = fmt.Sprintf("%s %s: %v", r.result, id, r.err)
	case t.o.dryRun:
		s = fmt.Sprintf("%s %s", r.action, id)
	default:
		return
	}
	_ = t.bar.Clear() // not to garble the bar
	fmt.Fprintln(t.stdout, s)
}

// line is the progress line: records so far, rate and counts.
func (t *tally) line() string {
	el := time.Since(t.start)
	return fmt.Sprintf("%s: %d records in %s (%.1f records/s): %s", t.name, t.n, el.Round(time.Millisecond), rate(t.n, el), t.countsText())
}

// verifyResults are the results of the verify pass, in the order the
// summary prints them.
var verifyResults = []string{"same", "differs", "failed"}

// countsText is every action (every verify result) with its count, in a
// fixed order whatever order the records came in.
func (t *tally) countsText() string {
	keys := verifyResults
	if t.name != "verify" {
		keys = actions
	} else if t.n == 0 {
		return "nothing selected"
	}
	s := make([]string, len(keys))
	for i, k := range keys {
		s[i] = fmt.Sprintf("%s %d", k, t.counts[k])
	}
	return strings.Join(s, ", ")
}

func rate(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// finish prints the summary and reports whether every record went well.
func (t *tally) finish() bool {
	_ = t.bar.Finish()
	fmt.Fprintln(t.stdout, t.line())
	if t.reportErr != nil {
		fmt.Fprintf(t.stderr, "ns-migrate: --report: %v\n", t.reportErr)
		return false
	}
	return t.counts[string(actFailed)]+t.counts[string(actConflict)]+t.counts[resultDiffers] == 0
}
