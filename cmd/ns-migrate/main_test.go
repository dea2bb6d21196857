package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"nameservice.dev/nameservice"
)

// seed fills ns with ledgers and graph sources, one of them retracted, and
// returns their IDs in order.
func seed(t *testing.T, ns *nameservice.NameService) []string {
	t.Helper()
	ctx := context.Background()
	recs := []*nameservice.Record{newLedger(t, "books"), newLedger(t, "tenant/a:main"), newLedger(t, "tenant/b:dev"),
		newGraphSource(t, "search:main"), newLedger(t, "old:main")}
	recs[0].Head, recs[0].Index = ptr(ref(12, "c12")), ptr(ref(10, "i10"))
	recs[1].Config = ptr(nameservice.Value{V: 2, Payload: nameservice.Object{"default_context": "ctx1", "big": 9007199254740993}})
	retract(3, 1700000500)(recs[4])
	var ids []string
	for _, r := range recs {
		must(t, ns.Import(ctx, r))
		ids = append(ids, r.ID.String())
	}
	slices.Sort(ids)
	return ids
}

func TestCopyIsIdempotentAndVerifies(t *testing.T) {
	from, to := memURL(t, "src"), memURL(t, "dst")
	src, dst := open(t, from), open(t, to)
	ids := seed(t, src)
	report := filepath.Join(t.TempDir(), "report.jsonl")

	r := want(t, exitOK, "--from", from, "--to", to, "--verify", "--report", report, "--parallel", "3")
	if !strings.Contains(r.stdout, "create 5, skip 0, advance 0, conflict 0, failed 0") || !strings.Contains(r.stdout, "verify: 5 records") {
		t.Fatalf("summary:\n%s", r.stdout)
	}
	if got, want := allJSON(t, dst), allJSON(t, src); !slices.Equal(got, want) {
		t.Fatalf("target:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var copied []string
	for _, l := range reportLines(t, report) {
		if l.Action == "create" && l.Result == resultDone {
			copied = append(copied, l.ID)
		}
	}
	slices.Sort(copied)
	if !slices.Equal(copied, ids) {
		t.Fatalf("report creates %v, want %v", copied, ids)
	}

	r = want(t, exitOK, "--from", from, "--to", to)
	if !strings.Contains(r.stdout, "create 0, skip 5, advance 0") {
		t.Fatalf("second run is not all skip:\n%s", r.stdout)
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	from, to := memURL(t, "src"), memURL(t, "dst")
	src, dst := open(t, from), open(t, to)
	seed(t, src)
	ahead := newLedger(t, "books")
	ahead.Head = ptr(ref(20, "c20"))
	must(t, dst.Import(context.Background(), ahead))
	before := allJSON(t, dst)

	r := want(t, exitFail, "--from", from, "--to", to, "--dry-run")
	for _, line := range []string{"create search:main", "conflict books:main: head: the target's commit_t 20 is ahead of the source's 12", "create 4, skip 0, advance 0, conflict 1, failed 0"} {
		if !strings.Contains(r.stdout, line) {
			t.Errorf("plan lacks %q:\n%s", line, r.stdout)
		}
	}
	if got := allJSON(t, dst); !slices.Equal(got, before) {
		t.Fatalf("--dry-run wrote to the target: %v", got)
	}
}

func TestSelectors(t *testing.T) {
	idsFile := filepath.Join(t.TempDir(), "ids.txt")
	must(t, os.WriteFile(idsFile, []byte("# chosen\nbooks\n\ntenant/b:dev\n"), 0o644))
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"--id", "books", "--id", "search:main"}, []string{"books:main", "search:main"}},
		{[]string{"--prefix", "tenant/"}, []string{"tenant/a:main", "tenant/b:dev"}},
		{[]string{"--kind", "graph_source"}, []string{"search:main"}},
		{[]string{"--kind", "ledger", "--skip-retracted"}, []string{"books:main", "tenant/a:main", "tenant/b:dev"}},
		{[]string{"--ids-from", idsFile}, []string{"books:main", "tenant/b:dev"}},
		{[]string{"--id", "old", "--skip-retracted"}, nil},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			from, to := memURL(t, "src"), memURL(t, "dst")
			src, dst := open(t, from), open(t, to)
			seed(t, src)
			want(t, exitOK, append([]string{"--from", from, "--to", to}, tc.args...)...)
			var got []string
			for r, err := range dst.List(context.Background(), nameservice.ListOptions{IncludeRetracted: true}) {
				must(t, err)
				got = append(got, r.ID.String())
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("copied %v, want %v", got, tc.want)
			}
		})
	}
}

func TestMissingIDFails(t *testing.T) {
	from, to := memURL(t, "src"), memURL(t, "dst")
	seed(t, open(t, from))
	r := want(t, exitFail, "--from", from, "--to", to, "--id", "ghost", "--id", "books")
	if !strings.Contains(r.stdout, "failed ghost:main: source: lookup") || !strings.Contains(r.stdout, "not found: ghost:main") {
		t.Fatalf("stdout:\n%s", r.stdout)
	}
	if lookupJSON(t, open(t, to), "books") == "" {
		t.Fatal("books was not copied past the missing ID")
	}
}

func TestResumeSkipsDone(t *testing.T) {
	from, to := memURL(t, "src"), memURL(t, "dst")
	seed(t, open(t, from))
	report := filepath.Join(t.TempDir(), "report.jsonl")
	want(t, exitOK, "--from", from, "--to", to, "--id", "books", "--id", "search", "--report", report)
	r := want(t, exitOK, "--from", from, "--to", to, "--resume", report, "--report", report)
	if !strings.Contains(r.stdout, "copy: 3 records") || !strings.Contains(r.stdout, "create 3") {
		t.Fatalf("resumed run did not do just the 3 others:\n%s", r.stdout)
	}
	if n := len(reportLines(t, report)); n != 5 {
		t.Fatalf("report has %d lines after resuming into it, want 5", n)
	}
}

func TestUsage(t *testing.T) {
	m := memURL(t, "x")
	bad := [][]string{
		{},
		{"--from", m},
		{"--from", m, "--to", m},
		{"--from", m, "--from-config", "c.json", "--to", "mem://y"},
		{"--from", m, "--to", "mem://y", "--kind", "table"},
		{"--from", m, "--to", "mem://y", "--parallel", "0"},
		{"--from", m, "--to", "mem://y", "--page-size", "1000001"},
		{"--from", m, "--to", "mem://y", "--parallel", "1025"}, // a worker and two buffered records each: 1e9 ran out of memory
		{"--from", m, "--to", "mem://y", "--verify-only", "--dry-run"},
		{"--from", m, "--to", "mem://y", "--dry-run", "--verify"},
		{"--from", m, "--to", "mem://y", "stray"},
		{"--from", m, "--to", "mem://y", "--no-such-flag"},
		{"--from", "nosuch://x", "--to", "mem://y"},
		{"--from", m, "--to", "mem://y", "--create-table"},
		{"--from", m, "--to", "mem://y", "--create-table", "--dry-run"}, // the plan of a run that would be refused
		{"--from", m, "--to", "mem://y", "--resume", filepath.Join(t.TempDir(), "absent.jsonl")},
		{"--from", m, "--to", "mem://y", "--ids-from", filepath.Join(t.TempDir(), "absent.txt")},
		{"--from", m, "--to", "mem://y", "--id", "a:b:c"},
	}
	for _, args := range bad {
		r := runCmd(t, args...)
		if r.code != exitUsage || r.stderr == "" {
			t.Errorf("ns-migrate %s: exit %d, stderr %q; want exit 2 with a message", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	if r := runCmd(t, "--help"); r.code != exitOK || !strings.Contains(r.stdout, "-verify-only") || r.stderr != "" {
		t.Errorf("--help: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if r := runCmd(t, "--version"); r.code != exitOK || !strings.HasPrefix(r.stdout, "ns-migrate ") || !strings.Contains(r.stdout, runtime.Version()) {
		t.Errorf("--version: exit %d, stdout %q", r.code, r.stdout)
	}
}

func TestVerifyShowsDifferences(t *testing.T) {
	from, to := memURL(t, "src"), memURL(t, "dst")
	src, dst := open(t, from), open(t, to)
	seed(t, src)
	want(t, exitOK, "--from", from, "--to", to)
	ctx := context.Background()
	_, err := dst.PublishCommit(ctx, "books", 13, "fluree:file://commits/c13")
	must(t, err)
	must(t, dst.Purge(ctx, "search"))

	r := want(t, exitFail, "--from", from, "--to", to, "--verify-only")
	for _, s := range []string{"differs books:main: the target differs (-source +target):", "commits/c12", "commits/c13",
		"differs search:main: missing at the target", "same 3", "differs 2"} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("verify output lacks %q:\n%s", s, r.stdout)
		}
	}
}

// TestInterruptFinishesInFlight cancels the run while records are in
// flight: those finish, no new one starts, and the pass ends.
func TestInterruptFinishesInFlight(t *testing.T) {
	from := memURL(t, "src")
	src := open(t, from)
	for i := range 50 {
		must(t, src.Import(context.Background(), newLedger(t, "l"+strings.Repeat("x", i))))
	}
	ctx, cancel := context.WithCancel(context.Background())
	o := &options{parallel: 4, progressEvery: time.Hour, sel: selector{pageSize: 5}}
	var out, errb strings.Builder
	tl := newTally("copy", o, nil, &out, &errb)
	var started atomic.Int32
	finished := make(chan bool, 100)
	runPass(ctx, o, src, func(wctx context.Context, it item) outcome {
		if started.Add(1) == 3 {
			cancel()
		}
		time.Sleep(10 * time.Millisecond)
		finished <- wctx.Err() == nil
		return outcome{id: it.id, action: string(actSkip), result: resultDone}
	}, tl)
	close(finished)
	for ok := range finished {
		if !ok {
			t.Fatal("a record in flight saw its context canceled")
		}
	}
	if tl.n >= 50 || tl.n < 3 {
		t.Fatalf("%d records done after the interrupt, want between 3 and 49", tl.n)
	}
}

// TestConnectionConfigs names both sides by Fluree JSON-LD connection
// configs: file storage as the source, a second directory as the target.
func TestConnectionConfigs(t *testing.T) {
	srcDir, dstDir, cfgDir := t.TempDir(), t.TempDir(), t.TempDir()
	seed(t, open(t, fileURL(srcDir)))
	config := func(name, dir string) string {
		p := filepath.Join(cfgDir, name)
		body := `{"@context": {"@base": "https://ns.flur.ee/config/connection/", "@vocab": "https://ns.flur.ee/system#"},
			"@graph": [{"@id": "storage", "@type": "Storage", "filePath": "` + dir + `"},
				{"@id": "connection", "@type": "Connection", "commitStorage": {"@id": "storage"}}]}`
		must(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	from, to := config("from.jsonld", srcDir), config("to.jsonld", dstDir)
	want(t, exitOK, "--from-config", from, "--to-config", to, "--verify")
	if got, want := allJSON(t, open(t, fileURL(dstDir))), allJSON(t, open(t, fileURL(srcDir))); !slices.Equal(got, want) {
		t.Fatalf("copy:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	r := want(t, exitUsage, "--from-config", filepath.Join(cfgDir, "absent.jsonld"), "--to-config", to)
	if !strings.Contains(r.stderr, "absent.jsonld") {
		t.Fatalf("want the missing config named: %s", r.stderr)
	}
}

// TestHelp: --help prints the usage and every flag on stdout and exits 0.
func TestHelp(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"--help"}, &out, &errb); code != exitOK || errb.Len() > 0 {
		t.Fatalf("--help: exit %d, stderr %q", code, errb.String())
	}
	for _, want := range []string{"usage: ns-migrate", "-from", "-to", "-verify", "-otlp-endpoint"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--help lacks %q:\n%s", want, out.String())
		}
	}
}
