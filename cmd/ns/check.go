package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	neturl "net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/jstemmer/go-junit-report/v2/junit"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/conformance"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers"
	"nameservice.dev/nameservice/guard"
	cmdline "nameservice.dev/nameservice/internal/cli"
	"nameservice.dev/nameservice/internal/driverutil"
)

// ns check URL runs the capability probe and the conformance suite against a
// live store, under a prefix of its own, and purges that prefix at the end
// (also when interrupted). It exits 0 when every case passed; 1 when any
// failed, the probe found the store unsafe or the run was interrupted; 2 on
// a usage error; and like every command 6 or 7 when the table or bucket is
// missing or access is denied.
func init() {
	var f checkFlags
	commands["check"] = &command{
		usage:   "URL [--quick] [--group G,...] [--junit FILE] [--prefix P] | URL --prefix P --cleanup",
		summary: "run the capability probe and the conformance suite against a live store, under a prefix of its own",
		example: "ns check 'dynamodb://staging-nameservice?region=eu-west-1' --quick --junit ns-check.xml",
		nargs:   1, local: true,
		flags: func(fs *flag.FlagSet) {
			fs.BoolVar(&f.quick, "quick", false, "run the quick subset")
			fs.StringVar(&f.groups, "group", "", "run only these groups, comma-separated (the probe runs always): "+strings.Join(conformance.GroupNames(), ", "))
			fs.StringVar(&f.junit, "junit", "", "write a JUnit XML report to FILE")
			fs.StringVar(&f.prefix, "prefix", "", "ID prefix to work under (default nscheck-<random>/)")
			fs.BoolVar(&f.cleanup, "cleanup", false, "run no case: only remove what a check that was killed left under --prefix")
		},
		run: func(c *call) error { return runCheck(c, f) },
	}
}

type checkFlags struct {
	quick, cleanup        bool
	groups, junit, prefix string
}

// checkGroups parses --group: a comma-separated list of the suite's group
// names (none: every group).
func checkGroups(list string) ([]string, error) {
	if list == "" {
		return nil, nil
	}
	names := strings.Split(list, ",")
	for _, n := range names {
		if !slices.Contains(conformance.GroupNames(), n) {
			return nil, usagef("check: --group: the suite has no group %q; its groups: %s", n, strings.Join(conformance.GroupNames(), ", "))
		}
	}
	return names, nil
}

// purgeTimeout bounds the final purge and collection, which run even after
// an interrupt.
const purgeTimeout = 2 * time.Minute

func runCheck(c *call, f checkFlags) error {
	url := c.args[0]
	if f.cleanup && f.prefix == "" {
		return usagef("check: --cleanup needs the --prefix of the check that was killed")
	}
	groups, err := checkGroups(f.groups)
	if err != nil {
		return err
	}
	prefix, err := checkPrefix(f.prefix, !f.cleanup)
	if err != nil {
		return err
	}
	ns, err := nameservice.Open(c.ctx, url)
	if err != nil {
		return err
	}
	defer ns.Close()
	finish := fmt.Sprintf("ns check %s --prefix %s --cleanup", shellQuote(redact(url)), prefix)
	if f.cleanup {
		return cleanPrefix(c.ctx, c.stdout, ns, prefix, finish)
	}
	if err := refuseUsedPrefix(c.ctx, ns, prefix, finish); err != nil {
		return err
	}
	mode := "full suite"
	if f.quick {
		mode = "quick subset"
	}
	fmt.Fprintf(c.stdout, "ns check: %s under prefix %s (should the run be killed, %s removes what it left)\n", mode, prefix, finish)

	var rep conformance.Report
	probe, probed := probeStore(c.ctx, ns)
	if probed {
		printGroup(c.stdout, probe)
	}
	if probed && probe.Failed() {
		// Every case would fail, or pass by luck, for the same reason.
		fmt.Fprintf(c.stdout, "the suite was not run: the store lacks what the driver relies on\n")
		rep.Groups = []conformance.GroupResult{probe}
	} else {
		open := func(ctx context.Context) (driver.Driver, error) { return drivers.Open(ctx, url) }
		rep = conformance.Check(c.ctx, open, conformance.CheckOptions{
			Prefix: prefix, Quick: f.quick, Groups: groups,
			Progress: func(g conformance.GroupResult) { printGroup(c.stdout, g) },
		})
		if probed {
			rep.Groups = append([]conformance.GroupResult{probe}, rep.Groups...)
		}
	}

	// With its standard output closed the run says what it does on stderr.
	notes := c.stdout
	if errors.Is(context.Cause(c.ctx), cmdline.ErrStdoutClosed) {
		notes = c.stderr
	}
	if rep.Interrupted {
		fmt.Fprintf(notes, "interrupted; removing the records under %s\n", prefix)
	}
	purgeErr := cleanPrefix(context.WithoutCancel(c.ctx), notes, ns, prefix, finish)
	if f.junit != "" {
		if err := writeJUnit(f.junit, rep); err != nil {
			return err
		}
	}
	if purgeErr != nil {
		return purgeErr
	}
	return summary(c.stdout, rep)
}

// redact returns rawURL with its secrets (a password, a key given as a
// parameter) replaced, for printing.
func redact(rawURL string) string {
	u, err := neturl.Parse(rawURL)
	if err != nil {
		return "URL"
	}
	return drivers.Redact(u)
}

// shellQuote quotes s for a POSIX shell when it holds anything but plain
// characters, so that a printed command can be pasted.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-_./:@%,=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// checkPrefix returns the prefix to work under: p with a trailing "/", or a
// random one.
func checkPrefix(p string, create bool) (string, error) {
	if p == "" {
		return "nscheck-" + driverutil.Token()[:8] + "/", nil
	}
	p = strings.TrimSuffix(p, "/") + "/"
	// The cases create records named P + NAME, with branches of their own:
	// the prefix must lie within a name that new records may take (a
	// cleanup only reads and purges what is there).
	id, err := nameservice.ParseID(p + "x")
	if err == nil && create && strings.Contains(p, ":") {
		err = fmt.Errorf("%w: it holds a ':', and the cases' IDs add a branch after their names", nameservice.ErrInvalidID)
	}
	if err == nil && create {
		err = guard.CheckNewID(id)
	}
	if err != nil {
		return "", usagef("check: --prefix %q does not make valid IDs: %v", p, err)
	}
	return p, nil
}

// refuseUsedPrefix refuses a prefix that already holds records: the final
// purge would remove them.
func refuseUsedPrefix(ctx context.Context, ns *nameservice.NameService, prefix, finish string) error {
	for r, err := range ns.List(ctx, nameservice.ListOptions{Prefix: prefix, IncludeRetracted: true, PageSize: 1}) {
		if _, unreadable := errors.AsType[*nameservice.RecordError](err); err != nil && !unreadable {
			return err
		}
		what := "a record"
		if r != nil {
			what = r.ID.String()
		}
		return usagef("check: prefix %s already holds records (%s); ns check purges its prefix, so give one that holds nothing (when a killed check left them, %s removes them)", prefix, what, finish)
	}
	return nil
}

// probeGuarantee is what the capability probe checks.
const probeGuarantee = "what the driver relies on: the store rejects a write whose condition fails, and applies each transaction once"

// probeStore runs the capability probe of a driver that declares one
// (driver.Prober). Its one case passes when the store is safe for the
// driver, and notes every condition checked, enforced or not.
func probeStore(ctx context.Context, ns *nameservice.NameService) (conformance.GroupResult, bool) {
	start := time.Now()
	res, err := ns.Probe(ctx)
	if errors.Is(err, nameservice.ErrUnsupported) {
		return conformance.GroupResult{}, false
	}
	c := conformance.CaseResult{Name: "PreconditionsEnforced", Status: conformance.Pass, Duration: time.Since(start), Message: res.String()}
	if m := res.Missing(); m != "" {
		c.Message = "missing or not enforced: " + m + " (" + c.Message + ")"
	}
	switch {
	case err != nil:
		c.Status, c.Message = conformance.Fail, err.Error()
	case !res.Safe():
		c.Status = conformance.Fail
	case res.Missing() != "":
		c.Message += "; the lock protocol keeps writers apart"
	}
	return conformance.GroupResult{Name: "Probe", Guarantee: probeGuarantee, Cases: []conformance.CaseResult{c}, Duration: c.Duration}, true
}

// printGroup prints one line for a group, and one indented line per failed
// case.
func printGroup(w io.Writer, g conformance.GroupResult) {
	n, d := len(g.Cases), g.Duration.Round(100*time.Millisecond)
	switch {
	case g.Failed():
		fmt.Fprintf(w, "FAIL %s (%d of %d cases failed, %v): guarantee broken: %s\n", g.Name, g.Count(conformance.Fail), n, d, g.Guarantee)
		for _, c := range g.Cases {
			if c.Status == conformance.Fail {
				fmt.Fprintf(w, "    %s: %s\n", c.Name, flatten(c.Message))
			}
		}
	case g.Skipped != "" || g.Count(conformance.Skip) == n:
		why := g.Skipped
		if why == "" && n > 0 {
			why = g.Cases[0].Message
		}
		fmt.Fprintf(w, "SKIP %s (%s): %s\n", g.Name, plural(n, "case"), why)
	default:
		skipped := ""
		if k := g.Count(conformance.Skip); k > 0 {
			skipped = fmt.Sprintf(", %d skipped", k)
		}
		fmt.Fprintf(w, "PASS %s (%s%s, %v)\n", g.Name, plural(n, "case"), skipped, d)
		for _, c := range g.Cases {
			if c.Status == conformance.Pass && c.Message != "" {
				fmt.Fprintf(w, "    note: %s: %s\n", c.Name, flatten(c.Message))
			}
		}
	}
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// flatten puts a message on one line.
func flatten(s string) string { return strings.Join(strings.Fields(s), " ") }

// summary prints the closing line and returns an error when anything failed.
func summary(w io.Writer, rep conformance.Report) error {
	var failed []string
	cases, bad, ran := 0, 0, 0
	for _, g := range rep.Groups {
		cases += len(g.Cases)
		ran += len(g.Cases) - g.Count(conformance.Skip)
		bad += g.Count(conformance.Fail)
		if g.Failed() {
			failed = append(failed, g.Name+" ("+g.Guarantee+")")
		}
	}
	switch {
	case len(failed) > 0:
		return fmt.Errorf("check failed: %d of %d cases; broken: %s", bad, cases, strings.Join(failed, "; "))
	case rep.Interrupted:
		return errors.New("check interrupted before every case ran")
	case ran == 0:
		return errors.New("check ran no case")
	}
	fmt.Fprintf(w, "ok: %d of %d cases passed, the rest skipped, in %v\n", ran, cases, rep.Duration.Round(100*time.Millisecond))
	return nil
}

// cleanPrefix purges every record under prefix, then collects at once what
// the purges left: nothing else writes under the check's own prefix. When
// it cannot, its error names finish, the command that completes it.
func cleanPrefix(ctx context.Context, w io.Writer, ns *nameservice.NameService, prefix, finish string) error {
	ctx, cancel := context.WithTimeout(ctx, purgeTimeout)
	defer cancel()
	err := purgePrefix(ctx, ns, prefix)
	var st nameservice.CollectStats
	if err == nil {
		st, err = ns.Collect(ctx, nameservice.CollectOptions{Prefix: prefix})
	}
	if err != nil {
		return fmt.Errorf("check: records or what their purges left may remain under %s (%s finishes the cleanup): %w", prefix, finish, err)
	}
	fmt.Fprintf(w, "removed the records under %s and the %s their purges left\n", prefix, plural(st.Removed, "object"))
	return nil
}

// purgePrefix purges every record under prefix, listing again until none is
// left (a listing index may lag behind the purges).
func purgePrefix(ctx context.Context, ns *nameservice.NameService, prefix string) error {
	// A listing index (DynamoDB's GSI) may show a record a moment after its
	// write: stop only when the prefix has listed empty for about 2 s.
	for empty := 0; empty < 5; time.Sleep(400 * time.Millisecond) {
		var ids []string
		for r, err := range ns.List(ctx, nameservice.ListOptions{Prefix: prefix, IncludeRetracted: true}) {
			var re *nameservice.RecordError
			switch {
			case err == nil:
				ids = append(ids, r.ID.String())
			case errors.As(err, &re) && re.ID.Name != "":
				ids = append(ids, re.ID.String())
			default:
				return err
			}
		}
		for _, id := range ids {
			if err := ns.Purge(ctx, id); err != nil && !errors.Is(err, nameservice.ErrNotFound) {
				return err
			}
		}
		if len(ids) == 0 {
			empty++
		} else {
			empty = 0
		}
	}
	return nil
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// junitReport is rep as JUnit XML: one testsuite per group, with its
// guarantee as a property, one testcase per case.
func junitReport(rep conformance.Report) junit.Testsuites {
	out := junit.Testsuites{Name: "ns check", Time: seconds(rep.Duration)}
	for i, g := range rep.Groups {
		s := junit.Testsuite{Name: g.Name, ID: i, Time: seconds(g.Duration)}
		s.AddProperty("guarantee", g.Guarantee)
		for _, c := range g.Cases {
			tc := junit.Testcase{Name: c.Name, Classname: "nscheck." + g.Name, Time: seconds(c.Duration)}
			switch c.Status {
			case conformance.Fail:
				tc.Failure = &junit.Result{Message: g.Guarantee + ": " + flatten(c.Message), Data: c.Message}
			case conformance.Skip:
				tc.Skipped = &junit.Result{Message: c.Message}
			}
			s.AddTestcase(tc)
		}
		out.AddSuite(s)
	}
	return out
}

func writeJUnit(path string, rep conformance.Report) error {
	var b bytes.Buffer
	b.WriteString(xml.Header)
	report := junitReport(rep)
	_ = report.WriteXML(&b) // a bytes.Buffer takes every write
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("check: write the JUnit report: %w", err)
	}
	return nil
}
