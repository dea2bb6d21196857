package main

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/drivers"
	"nameservice.dev/nameservice/internal/buildinfo"
	"nameservice.dev/nameservice/model"
)

// Issue 14, item 4: a bad T is a usage error whatever its form, and -1 is
// read as a T, not as a flag.
func TestBadTIsAUsageError(t *testing.T) {
	c := newCLI(t)
	c.want(exitOK, "init", "db")
	for _, bad := range []string{"0", "abc", "-1", "1.5", "99999999999999999999"} {
		code, _, errs := c.run("publish-commit", "db", bad, "c")
		if code != exitUsage || !strings.Contains(errs, "T ") {
			t.Errorf("publish-commit db %s: exit %d, stderr %q; want exit 2 naming T", bad, code, errs)
		}
		if code, _, errs := c.run("cas-ref", "db", "head", "--expect-none", bad, "c"); code != exitUsage || strings.Contains(errs, "flag provided") {
			t.Errorf("cas-ref ... %s: exit %d, stderr %q; want exit 2 naming T", bad, code, errs)
		}
	}
	c.want(exitOK, "publish-commit", "db", "--", "3", "c3")
}

// Issue 14, item 4: the largest --expect-v has no successor; it is refused
// instead of overflowing into a negative watermark.
func TestExpectVAtMaxIsRefused(t *testing.T) {
	c := newCLI(t)
	c.want(exitOK, "init", "db")
	max := strconv.FormatInt(math.MaxInt64, 10)
	for _, args := range [][]string{
		{"push-status", "db", "--expect-v", max, "ready"},
		{"push-config", "db", "--expect-v", max, `{}`},
	} {
		code, _, errs := c.run(args...)
		if code != exitUsage || !strings.Contains(errs, max) || strings.Contains(errs, "-9223372036854775808") {
			t.Errorf("ns %s: exit %d, stderr %q; want exit 2 refusing the value", strings.Join(args, " "), code, errs)
		}
	}
}

// Issue 14, item 6: an empty --url is an error, not the default directory.
func TestEmptyURLIsAnError(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, args := range [][]string{{"--url", "", "list"}, {"list", "--url", ""}, {"--url=", "init", "x"}} {
		var out, errb strings.Builder
		if code := run(context.Background(), args, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), "--url is empty") {
			t.Errorf("ns %q: exit %d, stderr %q; want exit 2 saying --url is empty", args, code, errb.String())
		}
	}
	if _, err := os.Stat(".nameservice"); err == nil {
		t.Fatal("an empty --url wrote to the default directory")
	}
}

// Issue 14, item 4: a record that cannot be printed is an error record on
// stdout and exit 1, for ns list (which prints the others) and ns lookup.
func TestUnprintableRecordExitsNonZero(t *testing.T) {
	c := newCLI(t)
	c.want(exitOK, "init", "a")
	c.want(exitOK, "init", "c")
	d, err := drivers.Open(context.Background(), c.url)
	if err != nil {
		t.Fatal(err)
	}
	// Written under the portable layer, as a foreign writer could: a number
	// JSON cannot encode.
	rec := model.NewLedger(model.ID{Name: "b", Branch: "main"}, 1)
	*rec.Config = model.Value{V: 1, Payload: model.Object{"n": json.Number("not-a-number")}}
	if err := d.Create(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	code, out, errs := c.run("list")
	if code != exitError || !strings.Contains(out, `"id":"a:main"`) || !strings.Contains(out, `"id":"c:main"`) || !strings.Contains(out, `{"error":`) {
		t.Fatalf("list: exit %d, stdout %q; want exit 1 with a, c and an error record", code, out)
	}
	if !strings.Contains(errs, "b:main") {
		t.Fatalf("list: stderr %q does not name the record", errs)
	}
	if code, out, _ := c.run("--json", "lookup", "b"); code != exitError || !strings.Contains(out, `{"error":`) {
		t.Fatalf("--json lookup: exit %d, stdout %q; want exit 1 after an error record", code, out)
	}
	t.Setenv(outputEnv, "human")
	if code, _, errs := c.run("lookup", "b"); code != exitError || !strings.Contains(errs, "cannot be printed") {
		t.Fatalf("lookup for a person: exit %d, stderr %q; want exit 1", code, errs)
	}
}

// Issue 14, item 2 through the CLI: over-limit and ambiguous payloads are
// refused with exit 2, and nothing changes.
func TestPayloadsOverLimitsAreRefused(t *testing.T) {
	c := newCLI(t)
	c.want(exitOK, "init", "db")
	deep := strings.Repeat(`{"a":`, 9999) + "1" + strings.Repeat("}", 9999)
	for _, args := range [][]string{
		{"push-config", "db", "--expect-v", "0", deep},
		{"push-config", "db", "--expect-v", "0", `{"a":1,"a":2}`},
		{"push-config", "db", "--expect-v", "0", "{\"a\":\"\xff\"}"},
		{"publish-commit", "db", "1", strings.Repeat("x", 10<<20)},
		{"create-graph-source", "gs", "--type", "t", "--config", deep},
	} {
		code, _, errs := c.run(args...)
		if code != exitUsage || len(errs) > 1000 {
			t.Errorf("ns %.60s...: exit %d, stderr %.300q; want exit 2 and a short message", strings.Join(args, " "), code, errs)
		}
	}
	out := c.want(exitOK, "--json", "lookup", "db")
	if !strings.Contains(out, `"head":{"v":0}`) || !strings.Contains(out, `"config":{"v":0}`) {
		t.Fatalf("record changed after refused writes: %s", out)
	}
	c.want(exitNotFound, "lookup", "gs")
	c.want(exitOK, "create-graph-source", "gs2", "--type", "db:Bm25Index")
	c.want(exitExists, "create-graph-source", "gs2", "--type", "db:VectorIndex")
}

func TestListTableForPeople(t *testing.T) {
	c := newCLI(t)
	c.want(exitOK, "init", "mydb")
	c.want(exitOK, "publish-commit", "mydb", "12", "c12")
	c.want(exitOK, "create-graph-source", "search/long-name", "--type", "db:Bm25Index", "--dep", "mydb")
	c.want(exitOK, "retract", "search/long-name")
	t.Setenv(outputEnv, "human")
	out := c.want(exitOK, "list", "--retracted")
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	want := [][]string{
		{"ID", "KIND", "COMMIT_T", "INDEX_T", "STATUS", "RETRACTED"},
		{"mydb:main", "ledger", "12", "0", "ready", "(v1)", "false"},
		{"search/long-name:main", "graph_source", "-", "0", "retracted", "(v2)", "true"},
	}
	if len(lines) != len(want) {
		t.Fatalf("table =\n%s", out)
	}
	for i, l := range lines {
		if got := strings.Fields(l); strings.Join(got, " ") != strings.Join(want[i], " ") {
			t.Errorf("row %d = %q, want fields %q", i, l, want[i])
		}
	}
	// Aligned: every column starts at the same offset in every row.
	col := strings.Index(lines[0], "KIND")
	for _, l := range lines[1:] {
		if l[col-1] != ' ' || l[col] == ' ' {
			t.Errorf("row %q is not aligned under KIND at %d", l, col)
		}
	}
	if out := c.want(exitOK, "list", "--json"); !strings.HasPrefix(out, `{"id":"mydb:main"`) {
		t.Errorf("--json on a terminal = %q, want JSON lines", out)
	}
	t.Setenv(outputEnv, "")
	if out := c.want(exitOK, "list"); !strings.HasPrefix(out, `{"id":"mydb:main"`) {
		t.Errorf("list to a pipe = %q, want JSON lines", out)
	}
}

func TestLookupForPeople(t *testing.T) {
	c := newCLI(t)
	c.want(exitOK, "init", "mydb")
	c.want(exitOK, "publish-commit", "mydb", "5", "fluree:file://c5.json")
	c.want(exitOK, "push-status", "mydb", "--expect-v", "1", "indexing", "--meta", `{"queue":3}`)
	t.Setenv(outputEnv, "human")
	out := c.want(exitOK, "lookup", "mydb")
	for _, s := range []string{"id", "mydb:main", "kind", "ledger", "commit_t 5  fluree:file://c5.json", "index_t 0  (unborn)", `status_v 2  indexing  {"queue":3}`, "config_v 0  (unborn)"} {
		if !strings.Contains(out, s) {
			t.Errorf("lookup =\n%s\nwant it to hold %q", out, s)
		}
	}
	if out := c.want(exitOK, "--json", "lookup", "mydb"); !strings.HasPrefix(out, `{"id":"mydb:main"`) {
		t.Errorf("--json lookup = %q", out)
	}
}

func TestVersion(t *testing.T) {
	c := newCLI(t)
	c.url = "nosuch://never-opened" // version needs no nameservice
	out := c.want(exitOK, "version")
	if !strings.HasPrefix(out, "ns ") || !strings.Contains(out, runtime.Version()) {
		t.Fatalf("version = %q", out)
	}
	var v buildinfo.Info
	if err := json.Unmarshal([]byte(c.want(exitOK, "--json", "version")), &v); err != nil || v.Go != runtime.Version() || v.Version == "" {
		t.Fatalf("version --json = %+v, %v", v, err)
	}
}

// TestBashCompletion loads the script into bash and asks it to complete
// lines as bash gives them (COMP_LINE, COMP_POINT; bash splits COMP_WORDS
// at ':'), with ns on PATH for the IDs of the line's --url.
func TestBashCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal("bash is needed to test its completion script")
	}
	c := &cli{t: t, url: "file://" + t.TempDir()}
	for _, id := range []string{"mydb", "mydb:dev", "other"} {
		c.want(exitOK, "init", id)
	}
	script := filepath.Join(t.TempDir(), "ns.bash")
	if err := os.WriteFile(script, []byte(c.want(exitOK, "completion", "bash")), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := buildNS(t)
	for line, want := range map[string]string{
		"ns pub":                               "publish-commit publish-index",
		"ns --url mem://x lis":                 "list",
		"ns list --k":                          "--kind",
		"ns list --kind ":                      "ledger graph_source",
		"ns --json push-status -":              "--config --expect-v --json --meta --url",
		"ns completion ":                       "bash zsh",
		"ns branch ":                           "create drop list",
		"ns lease b":                           "break",
		"ns branch create --":                  "--at --config --from --json --url",
		"ns branch drop --y":                   "--yes",
		"ns --url " + c.url + " lookup my":     "mydb:dev mydb:main",
		"ns --url " + c.url + " lookup mydb:":  "dev main", // bash puts them after the ':'
		"ns branch drop --url " + c.url + " o": "other:main",
		"ns --url " + c.url + " purge o":       "other:main",
	} {
		prog := `source "$1"; bin=$2; ns() { "$bin" "$@"; }; COMP_LINE=$3; COMP_POINT=${#3}; _ns; echo "${COMPREPLY[*]}"`
		got, err := exec.Command(bash, "-c", prog, "bash", script, bin, line).CombinedOutput()
		if err != nil || strings.TrimSpace(string(got)) != want {
			t.Errorf("completing %q = %q (%v), want %q", line, got, err, want)
		}
	}
	if code, _, _ := c.run("completion", "fish"); code != exitUsage {
		t.Errorf("completion fish: exit %d, want 2", code)
	}
}

func TestZshCompletionNamesEveryCommand(t *testing.T) {
	c := newCLI(t)
	out := c.want(exitOK, "completion", "zsh")
	if !strings.HasPrefix(out, "#compdef ns\n") {
		t.Fatalf("zsh script does not start with #compdef: %.40q", out)
	}
	for _, e := range listCommands() {
		if !strings.Contains(out, "\t\t"+quoteKey(e.name)+") compadd -- ") {
			t.Errorf("zsh script has no flags case for %s", e.name)
		}
	}
	if zsh, err := exec.LookPath("zsh"); err == nil {
		if msg, err := exec.Command(zsh, "-n", "-c", out).CombinedOutput(); err != nil {
			t.Fatalf("zsh -n: %v: %s", err, msg)
		}
	}
}

// TestLookupOfOverDeepFileIsReported: a record another writer nested 9,999
// deep is reported as unreadable, naming it, not printed half or crashed on.
func TestLookupOfOverDeepFileIsReported(t *testing.T) {
	dir := t.TempDir()
	c := &cli{t: t, url: "file://" + dir}
	c.want(exitOK, "init", "a")
	c.want(exitOK, "init", "b")
	c.want(exitOK, "push-status", "b", "--expect-v", "1", "ready", "--meta", `{"x":1}`)
	path := filepath.Join(dir, "ns@v2", "b", "main.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	deep := strings.Repeat(`{"a":`, 9999) + "1" + strings.Repeat("}", 9999)
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), `"x": 1`, `"x": `+deep, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := c.run("lookup", "b")
	if code != exitError || !strings.Contains(errs, "b:main") {
		t.Fatalf("lookup of an over-deep record: exit %d, stderr %.300q; want exit 1 naming it", code, errs)
	}
	var rec nameservice.Record
	if err := json.Unmarshal([]byte(c.want(exitOK, "--json", "lookup", "a")), &rec); err != nil {
		t.Fatal(err)
	}
}

// TestListGoesPastACorruptRecord (issue 13.2 through the CLI): the others
// are printed, as JSON lines and as a table, the bad one is named on stderr,
// and the exit code is 1.
func TestListGoesPastACorruptRecord(t *testing.T) {
	dir := t.TempDir()
	c := &cli{t: t, url: "file://" + dir}
	for _, id := range []string{"a", "b", "c"} {
		c.want(exitOK, "init", id)
	}
	if err := os.WriteFile(filepath.Join(dir, "ns@v2", "b", "main.json"), []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, form := range []string{"json", "human"} {
		t.Setenv(outputEnv, form)
		code, out, errs := c.run("list")
		if code != exitError || !strings.Contains(out, "a:main") || !strings.Contains(out, "c:main") || strings.Contains(out, "b:main") {
			t.Errorf("%s: exit %d, stdout %q; want a and c, exit 1", form, code, out)
		}
		if !strings.Contains(errs, "b") || !strings.Contains(errs, "main.json") {
			t.Errorf("%s: stderr %q does not name the bad record", form, errs)
		}
	}
}
