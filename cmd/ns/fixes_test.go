package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Item 5 of issue 37: each of the smaller paths an operator met.

// TestOutOfRangeT: a T past the largest watermark is out of range, not "not
// an integer".
func TestOutOfRangeT(t *testing.T) {
	c := newCLI(t)
	c.want(exitOK, "init", "mydb")
	for _, tt := range []string{"9223372036854775807", "9223372036854775808", "99999999999999999999"} {
		code, _, errs := c.run("publish-commit", "mydb", tt, "c")
		if code != exitUsage || !strings.Contains(errs, "out of range: at most 9223372036854775806") {
			t.Errorf("publish-commit T %s: exit %d, stderr %q", tt, code, errs)
		}
	}
	c.want(exitOK, "publish-commit", "mydb", "9223372036854775806", "c")
}

// TestNewIDsRefuseAt: ns init refuses an ID with '@' (Fluree's time travel),
// as ns branch create does.
func TestNewIDsRefuseAt(t *testing.T) {
	c := newCLI(t)
	for _, id := range []string{"x:dev@2", "x@2"} {
		code, _, errs := c.run("init", id)
		if code != exitUsage || !strings.Contains(errs, "contains '@', reserved for time travel") {
			t.Errorf("init %s: exit %d, stderr %q", id, code, errs)
		}
	}
	c.want(exitOK, "init", "x")
	c.want(exitOK, "publish-commit", "x", "1", "c1")
	c.want(exitUsage, "branch", "create", "x:dev@2")
}

// TestMetaCannotHoldState: the STATE argument is the state; --meta holding
// one is refused rather than dropped.
func TestMetaCannotHoldState(t *testing.T) {
	c := newCLI(t)
	c.want(exitOK, "init", "mydb")
	code, _, errs := c.run("push-status", "mydb", "--expect-v", "1", "indexing", "--meta", `{"state":"other","q":1}`)
	if code != exitUsage || !strings.Contains(errs, `--meta holds "state"`) {
		t.Errorf("push-status with a state in --meta: exit %d, stderr %q", code, errs)
	}
	if out := c.want(exitOK, "--json", "lookup", "mydb"); !strings.Contains(out, `"status":{"v":1,`) {
		t.Errorf("the refused push changed the status: %s", out)
	}
}

// TestPayloadsFromFileAndStdin: a JSON payload argument may be @FILE or @-.
func TestPayloadsFromFileAndStdin(t *testing.T) {
	c := newCLI(t)
	c.want(exitOK, "init", "mydb")
	file := filepath.Join(t.TempDir(), "config.json")
	must(t, os.WriteFile(file, []byte(`{"default_context": "ctx-from-file"}`+"\n"), 0o644))
	c.want(exitOK, "push-config", "mydb", "--expect-v", "0", "@"+file)
	defer func(r io.Reader) { stdin = r }(stdin)
	stdin = strings.NewReader(`{"queue_depth": 7}`)
	c.want(exitOK, "push-status", "mydb", "--expect-v", "1", "indexing", "--meta", "@-")
	stdin = strings.NewReader(`{"k1": 1.5}`)
	c.want(exitOK, "create-graph-source", "search", "--type", "db:Bm25Index", "--dep", "mydb", "--config", "@-")
	out := c.want(exitOK, "--json", "lookup", "mydb") + c.want(exitOK, "--json", "lookup", "search")
	for _, s := range []string{`"default_context":"ctx-from-file"`, `"queue_depth":7`, `"state":"indexing"`, `"k1":1.5`} {
		if !strings.Contains(out, s) {
			t.Errorf("the records lack %s:\n%s", s, out)
		}
	}
	if code, _, errs := c.run("push-config", "mydb", "--expect-v", "1", "@/nonexistent/config.json"); code != exitUsage || !strings.Contains(errs, "config.json") {
		t.Errorf("a missing payload file: exit %d, stderr %q", code, errs)
	}
}

// TestDropOfMainNeedsYes: dropping a ledger's main branch removes its head:
// without --yes it is refused and nothing changes.
func TestDropOfMainNeedsYes(t *testing.T) {
	c := newCLI(t)
	c.want(exitOK, "init", "mydb")
	c.want(exitOK, "publish-commit", "mydb", "3", "c3")
	for _, id := range []string{"mydb", "mydb:main"} {
		code, _, errs := c.run("branch", "drop", id)
		if code != exitUsage || !strings.Contains(errs, "give --yes") {
			t.Errorf("branch drop %s: exit %d, stderr %q", id, code, errs)
		}
	}
	c.want(exitOK, "lookup", "mydb")
	c.want(exitOK, "branch", "drop", "mydb", "--yes")
	c.want(exitNotFound, "lookup", "mydb")
}

// TestMissingDirectoryIsNotAnEmptyStore: a file URL whose directory does not
// exist is exit 6 for a read (it listed nothing with exit 0), while init
// creates the directory.
func TestMissingDirectoryIsNotAnEmptyStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "typo")
	c := &cli{t: t, url: "file://" + dir}
	for _, args := range [][]string{{"list"}, {"lookup", "mydb"}, {"branch", "list", "mydb"}, {"publish-commit", "mydb", "1", "c"}} {
		code, out, errs := c.run(args...)
		if code != exitNotProvisioned || out != "" || !strings.Contains(errs, dir+": the directory does not exist") {
			t.Errorf("ns %v on a missing directory: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
	c.want(exitOK, "init", "mydb")
	c.want(exitOK, "list")
}

// TestCasRefExpectNoneHint: --expect-none on an initialised ledger is not
// applied, and says that an unborn head is --expect-t 0.
func TestCasRefExpectNoneHint(t *testing.T) {
	c := newCLI(t)
	c.want(exitOK, "init", "mydb")
	code, _, errs := c.run("cas-ref", "mydb", "head", "--expect-none", "1", "c1")
	if code != exitNotApplied || !strings.Contains(errs, "--expect-t 0 expects an unborn head") {
		t.Errorf("cas-ref --expect-none on an unborn head: exit %d, stderr %q", code, errs)
	}
	c.want(exitOK, "cas-ref", "mydb", "head", "--expect-t", "0", "1", "c1")
}

// TestErrorsDoNotRepeat: an error names its operation and its driver once.
func TestErrorsDoNotRepeat(t *testing.T) {
	c := &cli{t: t, url: "file://" + t.TempDir()}
	c.want(exitOK, "init", "mydb")
	for _, args := range [][]string{{"reset-head", "ghost", "--commit", "c@1"}, {"branch", "drop", "ghost:dev"}, {"purge", "ghost"}} {
		_, _, errs := c.run(args...)
		if strings.Count(errs, "fs:") != 1 || strings.Count(errs, "ghost") != 1 {
			t.Errorf("ns %v: %q repeats itself", args, errs)
		}
	}
}

// TestMisplacedFileOneDiagnosis: a record file holding a record whose file
// is another (copied by hand) gets one diagnosis from lookup, list, init
// and purge, naming the file and the record it holds.
func TestMisplacedFileOneDiagnosis(t *testing.T) {
	dir := t.TempDir()
	c := &cli{t: t, url: "file://" + dir}
	c.want(exitOK, "init", "other")
	b, err := os.ReadFile(filepath.Join(dir, "ns@v2", "other", "main.json"))
	must(t, err)
	must(t, os.MkdirAll(filepath.Join(dir, "ns@v2", "mydb"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "ns@v2", "mydb", "main.json"), b, 0o644))
	const diagnosis = "mydb/main.json: internal error: the file holds record other:main, whose file is another"
	for _, args := range [][]string{{"lookup", "mydb"}, {"list"}, {"init", "mydb"}, {"purge", "mydb"}} {
		code, _, errs := c.run(args...)
		if code != exitError || !strings.Contains(errs, diagnosis) {
			t.Errorf("ns %v: exit %d, stderr %q; want exit 1 and %q", args, code, errs, diagnosis)
		}
	}
	c.want(exitOK, "lookup", "other")
}
