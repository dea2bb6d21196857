package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/server/auth"
)

// The operator's paths of README.md and docs/serve.md, each through the
// ns binary and a real listener (issue 37).

// binRun is one run of the ns binary.
type binRun struct {
	code           int
	stdout, stderr string
}

// runBin runs the ns binary bin with args, in an environment holding none
// of the variables ns reads but those of env.
func runBin(t *testing.T, bin string, env []string, args ...string) binRun {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(cleanEnv(), env...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	var ee *exec.ExitError
	if err := cmd.Run(); err != nil && !errors.As(err, &ee) {
		t.Fatalf("ns %v: %v", args, err)
	}
	return binRun{cmd.ProcessState.ExitCode(), out.String(), errb.String()}
}

// cleanEnv is the test's environment without the variables ns reads.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k != "NAMESERVICE_URL" && k != "NAMESERVICE_TOKEN" && k != outputEnv {
			env = append(env, kv)
		}
	}
	return env
}

// The example tokens whose hashes docs/serve.md's token file holds.
const (
	docIndexerToken = "example-indexer-eu-token"
	docAuditorToken = "example-auditor-token"
	docOpsToken     = "example-ops-oncall-token"
)

// documentedTokenFile writes the token file of docs/serve.md, as it is
// there, into a file, after checking that its hashes are those of the
// example tokens the page names.
func documentedTokenFile(t *testing.T) string {
	t.Helper()
	blk := findDocBlock(t, "docs/serve.md", "json", `"tokens"`)
	for _, tok := range []string{docIndexerToken, docAuditorToken, docOpsToken} {
		if !strings.Contains(blk.text, auth.HashToken(tok)) {
			t.Fatalf("%s: the token file lacks the hash of the example token %q", blk, tok)
		}
	}
	path := filepath.Join(t.TempDir(), "tokens.json")
	must(t, os.WriteFile(path, []byte(blk.text), 0o600))
	return path
}

// operatorFixture is a file store with five records, one of them truncated,
// and ns serve over it with the token file of docs/serve.md.
type operatorFixture struct {
	bin, dir string
	srv      *serveProcess
}

func newOperatorFixture(t *testing.T) *operatorFixture {
	f := &operatorFixture{bin: buildNS(t), dir: t.TempDir()}
	ctx := context.Background()
	ns, err := nameservice.Open(ctx, "file://"+f.dir)
	must(t, err)
	defer ns.Close()
	for _, id := range []string{"mydb", "tenant-eu/books", "tenant-eu/broken", "tenant-eu/sales", "other"} {
		must(t, ns.Init(ctx, id))
	}
	for _, id := range []string{"mydb", "tenant-eu/books"} {
		_, err := ns.PublishCommit(ctx, id, 5, "fluree:file://"+id+"/t5.json")
		must(t, err)
	}
	// Truncated, as a disk that filled up would leave it.
	broken := filepath.Join(f.dir, "ns@v2", "tenant-eu", "broken", "main.json")
	fi, err := os.Stat(broken)
	must(t, err)
	must(t, os.Truncate(broken, fi.Size()/2))
	f.srv = startServe(t, f.bin, "file://"+f.dir, "--tokens", documentedTokenFile(t))
	return f
}

// get fetches path from the server with token, returning status and body.
func (f *operatorFixture) get(t *testing.T, path, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, f.srv.URL+path, nil)
	must(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	must(t, err)
	return resp.StatusCode, string(b)
}

func TestOperatorPaths(t *testing.T) {
	f := newOperatorFixture(t)
	t.Run("DocumentedTokenFileRunsResetHead", f.documentedTokens)
	t.Run("ConsoleShowsUnreadableRecords", f.consoleUnreadable)
	t.Run("BadTokenIsPermissionDenied", f.badToken)
	stopServe(t, f.srv)
	// What the answers leave out is in the server's log.
	if log := f.srv.Stderr.String(); !strings.Contains(log, "tenant-eu/broken") || !strings.Contains(log, f.dir) {
		t.Errorf("the server's log does not name the unreadable record and its file:\n%s", log)
	}
}

// documentedTokens: the token file of docs/serve.md starts the server, its
// admin token (ops-oncall) moves a head back over http://, and a token
// without the admin scope gets exit 7.
func (f *operatorFixture) documentedTokens(t *testing.T) {
	reset := []string{"--url", f.srv.URL, "reset-head", "tenant-eu/books", "--commit", "fluree:file://tenant-eu/books/t3.json@3", "--no-index"}
	if r := runBin(t, f.bin, []string{"NAMESERVICE_TOKEN=" + docIndexerToken}, reset...); r.code != exitPermissionDenied {
		t.Errorf("reset-head with indexer-eu's token: exit %d, want %d\n%s", r.code, exitPermissionDenied, r.stderr)
	}
	r := runBin(t, f.bin, []string{"NAMESERVICE_TOKEN=" + docOpsToken}, reset...)
	if r.code != exitOK || !strings.Contains(r.stdout, "head was v5") {
		t.Fatalf("reset-head with ops-oncall's token: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runBin(t, f.bin, []string{"NAMESERVICE_TOKEN=" + docAuditorToken}, "--url", f.srv.URL, "--json", "lookup", "tenant-eu/books")
	if r.code != exitOK || !strings.Contains(r.stdout, `"head":{"v":3,`) {
		t.Errorf("lookup after the reset (auditor's token): exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// consoleUnreadable: the console lists the truncated record as one that
// cannot be read, for the admin and for the tenant whose scope holds it,
// answers its page with the API's fixed message, and no answer of the
// console or the API holds the data directory or the backend's text.
func (f *operatorFixture) consoleUnreadable(t *testing.T) {
	const broken = "tenant-eu/broken:main"
	for _, tok := range []string{docOpsToken, docIndexerToken} {
		pages := map[string]string{}
		for _, path := range []string{"/ui", "/ui/record/" + broken, "/ns/v1/records", "/ns/v1/records/" + broken, "/ui/lag"} {
			_, pages[path] = f.get(t, path, tok)
		}
		ui := pages["/ui"]
		if !strings.Contains(ui, `data-id="`+broken+`" class="unreadable"`) || !strings.Contains(ui, "1 of these records cannot be read") {
			t.Errorf("token %s: /ui does not list %s as unreadable:\n%s", tok, broken, ui)
		}
		status, page := f.get(t, "/ui/record/"+broken, tok)
		const fixed = "get " + broken + ": internal error: the backend holds data the server cannot read (details in the server&#39;s log)"
		if status != http.StatusInternalServerError || !strings.Contains(page, fixed) {
			t.Errorf("token %s: the unreadable record's page: %d\n%s", tok, status, page)
		}
		for path, body := range pages {
			for _, leak := range []string{f.dir, "ns@v2", "main.json", "malformed", "unexpected end"} {
				if strings.Contains(body, leak) {
					t.Errorf("token %s: %s holds %q:\n%s", tok, path, leak, body)
				}
			}
		}
	}
}

// badToken: over http://, no token or a wrong one exits 7 (permission
// denied), prints nothing on stdout (not even a table's header), and says
// where the token comes from.
func (f *operatorFixture) badToken(t *testing.T) {
	for _, env := range [][]string{{outputEnv + "=human"}, {outputEnv + "=human", "NAMESERVICE_TOKEN=wrong"}} {
		for _, args := range [][]string{{"list"}, {"lookup", "mydb"}, {"init", "x"}} {
			r := runBin(t, f.bin, env, append([]string{"--url", f.srv.URL}, args...)...)
			if r.code != exitPermissionDenied || r.stdout != "" || !strings.Contains(r.stderr, "$NAMESERVICE_TOKEN") ||
				!strings.Contains(r.stderr, "?token_file=") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
				t.Errorf("ns %v with %v: exit %d, want %d\nstdout %q\nstderr %q", args, env, r.code, exitPermissionDenied, r.stdout, r.stderr)
			}
		}
	}
}

// TestCheckWithClosedPipeLeavesNothing: `ns check file://DIR | head -1`
// takes the first line and closes the pipe; ns check then cleans up as on
// SIGINT, and no file remains in DIR.
func TestCheckWithClosedPipeLeavesNothing(t *testing.T) {
	bin := buildNS(t)
	bash, err := exec.LookPath("bash")
	must(t, err)
	dir := t.TempDir()
	cmd := exec.Command(bash, "-c", `set -o pipefail; "$0" check "file://$1" | head -1`, bin, dir)
	cmd.Env = cleanEnv()
	out, err := cmd.Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitError {
		t.Errorf("the pipeline: %v, want ns check's exit 1 (interrupted)", err)
	}
	stderr := ""
	if ee != nil {
		stderr = string(ee.Stderr)
	}
	if !strings.HasPrefix(string(out), "ns check: full suite under prefix nscheck-") || strings.Count(string(out), "\n") != 1 {
		t.Errorf("head -1 got %q", out)
	}
	if !strings.Contains(stderr, "interrupted; removing the records under nscheck-") || !strings.Contains(stderr, "removed the records under") {
		t.Errorf("stderr does not tell the cleanup:\n%s", stderr)
	}
	var left []string
	must(t, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			left = append(left, path)
		}
		return err
	}))
	if len(left) > 0 {
		t.Errorf("ns check | head -1 left %d files in the store: %v", len(left), left)
	}
}
