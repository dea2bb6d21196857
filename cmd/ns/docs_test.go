package main

import (
	"context"
	"crypto/ed25519"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/drivers/blob"
	"nameservice.dev/nameservice/drivers/dynamodb"
	"nameservice.dev/nameservice/drivers/fs"
	"nameservice.dev/nameservice/drivers/s3etag"
	"nameservice.dev/nameservice/internal/awsconf"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/lease"
	"nameservice.dev/nameservice/server/auth"
)

// TestDocsExamples runs every example of README.md and docs/ that a user
// would paste: shell commands, Go snippets, token files, configs, file
// formats, URLs, output shown. What a block is comes from its fence's
// language (sh, bash, go) or from the mark written just above it in the
// page's source, `<!-- example: KIND[: note] -->`; a block that is neither
// fails the test, and one that cannot be run says so in its mark
// (`not run: why`), so no example is left out silently. The test logs how
// many examples it ran.
//
// The shell examples run in bash, in a directory of their own that links
// the repository's files (for `go run ./cmd/ns`), with the ns, ns-migrate
// and ns-bench binaries on PATH, and with AWS_ENDPOINT_URL_DYNAMODB and
// AWS_ENDPOINT_URL_S3 naming the test servers: the documented
// dynamodb:// and s3:// URLs reach DynamoDB Local and versitygw unchanged.
// What cannot be reached that way (a host, /etc/ns, /var/lib/ns) is
// replaced, by exact text, as docSubstitutions lists; every substitution
// must be used, so that one the docs no longer need fails the test.
func TestDocsExamples(t *testing.T) {
	t.Parallel() // long: runs beside the other long tests
	d := newDocsRun(t)
	d.goExamples = &goExamples{}
	for _, f := range docFiles(t) {
		for _, b := range docBlocks(t, f) {
			if k, _ := b.kind(); k == "go" {
				d.goExamples.blocks = append(d.goExamples.blocks, b)
			}
		}
	}
	var ran, notRun []string
	executed := 0
	for _, f := range docFiles(t) {
		for _, b := range docBlocks(t, f) {
			kind, note := b.kind()
			if kind == "not run" {
				if note == "" {
					t.Errorf("%s: marked not run without saying why", b)
				}
				notRun = append(notRun, b.String()+": "+note)
				continue
			}
			runner := docRunners[kind]
			if runner == nil {
				t.Errorf("%s: no runner for an example of kind %q: run it, or mark it (<!-- example: KIND -->, see TestDocsExamples)", b, kind)
				continue
			}
			ran = append(ran, b.String())
			t.Run(strings.NewReplacer(" ", "_", "/", "_").Replace(b.String()), func(t *testing.T) {
				executed++
				runner(t, d, b, note)
			})
		}
	}
	if executed == len(ran) { // not narrowed by -run
		d.checkSubstitutionsUsed(t)
	}
	t.Logf("ran %d examples of README.md and docs/; %d marked not runnable:\n  %s", len(ran), len(notRun), strings.Join(notRun, "\n  "))
}

// kind returns what the block is and the note after it: the runner (or
// "not run") its mark starts with, else its language's (sh and bash run in
// bash, go compiles and runs).
func (b docBlock) kind() (kind, note string) {
	if b.mark != "" {
		names := []string{"not run"}
		for k := range docRunners {
			names = append(names, k)
		}
		sort.Slice(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
		for _, k := range names {
			if rest, ok := strings.CutPrefix(b.mark, k); ok && (rest == "" || strings.ContainsAny(rest[:1], " ;:")) {
				return k, strings.TrimLeft(rest, " ;:")
			}
		}
		return b.mark, ""
	}
	switch b.lang {
	case "sh", "bash":
		return "sh", ""
	case "go":
		return "go", ""
	}
	return b.lang, ""
}

type docRunner func(t *testing.T, d *docsRun, b docBlock, note string)

var docRunners map[string]docRunner

func init() {
	docRunners = map[string]docRunner{
		"sh":           runShellExample,
		"serve":        runServeExample,
		"go":           runGoExample,
		"go test":      runGoTestExample,
		"token file":   runTokenFileExample,
		"record json":  runRecordJSONExample,
		"lease status": runLeaseStatusExample,
		"nsv2":         runNSv2Example,
		"urls":         runURLsExample,
		"table spec":   runTableSpecExample,
		"output":       runOutputExample,
		"transcript":   runTranscriptExample,
		"bench":        runBenchExample,
	}
}

// docsRun is what the examples share: the binaries, the directory they run
// in, the substitutions and which were used.
type docsRun struct {
	tmp        string // lives as long as the whole test: what examples share
	goExamples *goExamples
	nsv2       nsv2Stores
	migrate    migrateRun
	bins       string // a directory holding ns, ns-migrate and ns-bench
	env        []string
	subst      map[string]string
	used       map[string]bool
	mu         sync.Mutex
	lazy       map[string]func(t *testing.T) // substitution targets made on first use
	cleanup    []func()
}

// docSubstitutions are the texts of the examples that name what the test
// cannot reach as written, each with what the test makes in its place
// (see docsRun.target).
var docSubstitutions = []string{
	"file:///var/lib/nameservice", // README's Go example
	"file:///var/lib/ns",          // ns-migrate's source
	"https://ns.internal:8443?token_file=/run/ns-token",
	"/etc/ns/",
	"0.0.0.0:8090",
}

func newDocsRun(t *testing.T) *docsRun {
	dynamo, s3 := testenv.DynamoDBEndpoint(t), testenv.S3Endpoint(t)
	d := &docsRun{bins: t.TempDir(), tmp: t.TempDir(), subst: map[string]string{}, used: map[string]bool{}}
	ns := buildNS(t)
	must(t, os.Symlink(ns, filepath.Join(d.bins, "ns")))
	for _, c := range []string{"ns-migrate", "ns-bench"} {
		out, err := goCommand(".", "build", "-buildvcs=false", "-o", filepath.Join(d.bins, c), "../"+c).CombinedOutput()
		if err != nil {
			t.Fatalf("go build %s: %v\n%s", c, err, out)
		}
	}
	d.env = append(cleanEnv(), "PATH="+d.bins+string(os.PathListSeparator)+os.Getenv("PATH"),
		"AWS_ENDPOINT_URL_DYNAMODB="+dynamo, "AWS_ENDPOINT_URL_S3="+s3, trimpathFlags())
	d.makeTargets(t)
	t.Cleanup(func() {
		for _, f := range d.cleanup {
			f()
		}
	})
	return d
}

// trimpathFlags returns GOFLAGS with -trimpath added (go env is asked
// once): the examples that `go run ./cmd/...` each run in a sandbox of
// their own, and without it the sandbox's path is part of every package's
// build, so each one compiled the whole module again (a minute a sandbox
// on two busy cores).
var trimpathFlags = sync.OnceValue(func() string {
	out, _ := exec.Command("go", "env", "GOFLAGS").Output() // the environment's, or go env -w's
	flags := strings.TrimSpace(string(out))
	if !slices.Contains(strings.Fields(flags), "-trimpath") {
		flags = strings.TrimSpace(flags + " -trimpath")
	}
	return "GOFLAGS=" + flags
})

// goCommand is the go command with args, run in dir with -trimpath, as
// the examples' `go run` runs (see trimpathFlags): one build of the module
// serves them all.
func goCommand(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("go", args...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), trimpathFlags())
	return cmd
}

// tempDir returns a new directory that lasts as long as the whole test
// (a subtest's t.TempDir goes with the subtest).
func (d *docsRun) tempDir(t *testing.T) string {
	dir, err := os.MkdirTemp(d.tmp, "x")
	must(t, err)
	return dir
}

// sandbox returns a new directory linking every file of the repository's
// root but the default store, for examples that run `go run ./cmd/ns`.
func (d *docsRun) sandbox(t *testing.T) string {
	dir := t.TempDir()
	ents, err := os.ReadDir(repoRoot)
	must(t, err)
	root, err := filepath.Abs(repoRoot)
	must(t, err)
	for _, e := range ents {
		if e.Name() == ".nameservice" || e.Name() == ".git" {
			continue
		}
		must(t, os.Symlink(filepath.Join(root, e.Name()), filepath.Join(dir, e.Name())))
	}
	return dir
}

// substitute replaces in text what docSubstitutions names, making each
// target on its first use.
func (d *docsRun) substitute(t *testing.T, text string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	keys := append([]string(nil), docSubstitutions...)
	sort.Slice(keys, func(i, j int) bool { return len(keys[i]) > len(keys[j]) })
	for _, k := range keys {
		if !strings.Contains(text, k) {
			continue
		}
		if mk := d.lazy[k]; mk != nil {
			mk(t)
			delete(d.lazy, k)
		}
		d.used[k] = true
		text = strings.ReplaceAll(text, k, d.subst[k])
	}
	return text
}

func (d *docsRun) checkSubstitutionsUsed(t *testing.T) {
	for _, k := range docSubstitutions {
		if !d.used[k] {
			t.Errorf("no example names %q any more: remove it from docSubstitutions", k)
		}
	}
}

// bash runs script in bash (errexit, pipefail) in dir with the examples'
// environment, returning its output and its error.
func (d *docsRun) bash(dir, script string) (string, error) {
	cmd := exec.Command("bash", "-e", "-o", "pipefail", "-c", script)
	cmd.Dir, cmd.Env = dir, d.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// runShellExample runs the block in bash after the mark's setup (a note
// "setup: COMMANDS"), in a sandbox of its own: every command must succeed.
func runShellExample(t *testing.T, d *docsRun, b docBlock, note string) {
	script := b.text
	if setup, ok := strings.CutPrefix(note, "setup:"); ok {
		script = setup + "\n" + script
	}
	script = d.substitute(t, script)
	if strings.HasPrefix(note, "quick") {
		script = withQuick(script)
	}
	dir := d.sandbox(t)
	out, err := d.bash(dir, script)
	if err != nil {
		t.Fatalf("%s: %v\n%s\n--- output:\n%s", b, err, script, out)
	}
	t.Logf("%s:\n%s", b, out)
}

// withQuick adds --quick to every ns check of script that runs the whole
// suite (the whole suite runs against every backend in TestCheck*).
func withQuick(script string) string {
	lines := strings.Split(script, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "ns check ") && !strings.Contains(l, "--quick") {
			cmd, comment, _ := strings.Cut(l, " #")
			lines[i] = cmd + " --quick"
			if comment != "" {
				lines[i] += " #" + comment
			}
		}
	}
	return strings.Join(lines, "\n")
}

// jsonEqual reports whether two JSON texts hold the same value.
func jsonEqual(a, b []byte) (bool, error) {
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		return false, fmt.Errorf("first: %w", err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		return false, fmt.Errorf("second: %w", err)
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb), nil
}

// docCtx is the context of the examples' own calls.
var docCtx = context.Background()

// outputPattern turns a line of documented output into a pattern: "..."
// matches anything, and with numbers varying so does every number.
func outputPattern(line string, numbersVary bool) *regexp.Regexp {
	parts := strings.Split(line, "...")
	for i, p := range parts {
		p = regexp.QuoteMeta(p)
		if numbersVary { // a number, and a duration's unit (40.0s, 457ms)
			p = regexp.MustCompile(`[0-9]+(\\\.[0-9]+)?(s\b)?`).ReplaceAllString(p, `[0-9]+(\.[0-9]+)?[a-zµ]*`)
		}
		parts[i] = p
	}
	return regexp.MustCompile(strings.Join(parts, ".*"))
}

// wantLines checks that every line of the block matches a line of out.
func wantLines(t *testing.T, b docBlock, out string, numbersVary bool) {
	t.Helper()
	lines := strings.Split(out, "\n")
	for _, l := range strings.Split(strings.TrimSpace(b.text), "\n") {
		re := outputPattern(strings.TrimSpace(l), numbersVary)
		found := false
		for _, o := range lines {
			found = found || re.MatchString(o)
		}
		if !found {
			t.Errorf("%s: no line of the output matches %q\noutput:\n%s", b, l, out)
		}
	}
}

// The DynamoDB tables and the bucket the examples name, made before them
// and removed after (the examples run against the test servers).
var (
	docTables  = []string{"fluree-nameservice", "staging-nameservice", "ns-runbook"} // ns-runbook: DST of docs/migrate.md's runbook
	docBuckets = []string{"staging-bucket"}
)

// makeTargets makes what the examples name: the tables and bucket, and the
// substitutions' targets (the costly ones on first use).
func (d *docsRun) makeTargets(t *testing.T) {
	for _, table := range docTables {
		url := "'dynamodb://" + table + "?region=eu-west-1'"
		d.dropTable(t, table) // left by a run that was killed
		if out, err := d.bash(t.TempDir(), "ns --url "+url+" table create"); err != nil {
			t.Fatalf("ns table create %s: %v\n%s", table, err, out)
		}
		d.cleanup = append(d.cleanup, func() { d.dropTable(t, table) })
	}
	for _, bucket := range docBuckets {
		d.makeBucket(t, bucket)
	}
	d.subst["file:///var/lib/nameservice"] = "file://" + filepath.Join(t.TempDir(), "nameservice")
	src := t.TempDir()
	d.subst["file:///var/lib/ns"] = "file://" + src
	if out, err := d.bash(t.TempDir(), fmt.Sprintf("ns --url file://%s init books && ns --url file://%s publish-commit books 3 fluree:file://books/t3.json", src, src)); err != nil {
		t.Fatalf("seed the migration source: %v\n%s", err, out)
	}
	d.subst["0.0.0.0:8090"] = "127.0.0.1:0"
	etc := filepath.Join(t.TempDir(), "etc-ns")
	d.subst["/etc/ns/"] = etc + "/"
	d.lazy = map[string]func(t *testing.T){
		"/etc/ns/": func(t *testing.T) { d.makeEtcNS(t, etc) },
		"https://ns.internal:8443?token_file=/run/ns-token": func(t *testing.T) {
			d.subst["https://ns.internal:8443?token_file=/run/ns-token"] = d.startTLSServe(t)
		},
	}
}

// dynamoClient is a client of DynamoDB Local in the examples' region.
func dynamoClient(t *testing.T, table string) *awsdynamodb.Client {
	cfg, err := dynamodb.ParseURL(&url.URL{Scheme: "dynamodb", Host: table,
		RawQuery: "region=eu-west-1&endpoint=" + url.QueryEscape(testenv.DynamoDBEndpoint(t))})
	must(t, err)
	c, err := dynamodb.NewClient(docCtx, cfg)
	must(t, err)
	return c
}

func (d *docsRun) dropTable(t *testing.T, table string) {
	_, _ = dynamoClient(t, table).DeleteTable(docCtx, &awsdynamodb.DeleteTableInput{TableName: aws.String(table)})
}

// makeBucket creates bucket on versitygw, emptied and removed at the end.
func (d *docsRun) makeBucket(t *testing.T, bucket string) {
	c, err := s3etag.NewClient(docCtx, s3etag.Config{Bucket: bucket, Region: "us-east-1", Endpoint: testenv.S3Endpoint(t), PathStyle: true})
	must(t, err)
	awsconf.RemoveBucket(docCtx, c, bucket) // left by a run that was killed
	if _, err := c.CreateBucket(docCtx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("create bucket %s: %v", bucket, err)
	}
	d.cleanup = append(d.cleanup, func() { awsconf.RemoveBucket(docCtx, c, bucket) })
}

// makeEtcNS writes what docs/serve.md's command reads from /etc/ns: the
// documented token file, a trusted issuer, a certificate and its key.
func (d *docsRun) makeEtcNS(t *testing.T, dir string) {
	must(t, os.MkdirAll(dir, 0o755))
	tokens, err := os.ReadFile(documentedTokenFile(t))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, "tokens.json"), tokens, 0o600))
	pub, _, err := ed25519.GenerateKey(nil)
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, "issuers.txt"), []byte("# the example's issuer\n"+auth.DIDKey(pub)+"\n"), 0o644))
	selfSigned(t, dir) // tls.crt, tls.key
}

// startTLSServe starts ns serve over HTTPS on a file store with a token
// that may write under ns check's prefix, and returns its URL as README's
// `ns check` example gives it: with token_file, and ca_file to trust it.
func (d *docsRun) startTLSServe(t *testing.T) string {
	dir := t.TempDir()
	cert, key := selfSigned(t, dir)
	tokens := filepath.Join(dir, "tokens.json")
	b, err := json.Marshal(auth.TokenFile{Tokens: []auth.TokenEntry{
		{Name: "ns-check", SHA256: auth.HashToken("check-token"), Read: []string{"nscheck-"}, Write: []string{"nscheck-"}, Admin: []string{"nscheck-"}}}})
	must(t, err)
	must(t, os.WriteFile(tokens, b, 0o600))
	must(t, os.WriteFile(filepath.Join(dir, "ns-token"), []byte("check-token\n"), 0o600))
	p := startServe(t, buildNS(t), "file://"+filepath.Join(dir, "store"), "--tokens", tokens, "--tls-cert", cert, "--tls-key", key)
	return p.URL + "?token_file=" + filepath.Join(dir, "ns-token") + "&ca_file=" + cert
}

// runServeExample starts the documented ns serve command, waits for the
// address it listens on, asks /readyz, and stops it with SIGTERM: it must
// exit 0.
func runServeExample(t *testing.T, d *docsRun, b docBlock, _ string) {
	script := d.substitute(t, b.text)
	cmd := exec.Command("bash", "-c", "exec "+strings.ReplaceAll(script, "\\\n", " "))
	cmd.Env = d.env
	p := testenv.StartCmd(t, cmd)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := c.Get(p.URL + "/readyz")
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("%s: /readyz answers %d", b, resp.StatusCode)
	}
	stopServe(t, p)
}

// runTokenFileExample: the documented token file parses, makes an
// authenticator, and holds the hashes of the example tokens the page names.
func runTokenFileExample(t *testing.T, _ *docsRun, b docBlock, _ string) {
	entries, err := auth.ParseTokenFile([]byte(b.text))
	must(t, err)
	_, err = auth.NewAuthenticator(auth.Config{Tokens: entries})
	must(t, err)
	for _, tok := range []string{docIndexerToken, docAuditorToken, docOpsToken} {
		if !strings.Contains(b.text, auth.HashToken(tok)) {
			t.Errorf("%s lacks the hash of the example token %q", b, tok)
		}
	}
}

// runRecordJSONExample: the documented record JSON decodes as a record and
// encodes back to the same JSON.
func runRecordJSONExample(t *testing.T, _ *docsRun, b docBlock, _ string) {
	var rec nameservice.Record
	must(t, rec.UnmarshalJSON([]byte(b.text)))
	out, err := rec.MarshalJSON()
	must(t, err)
	if eq, err := jsonEqual([]byte(b.text), out); err != nil || !eq {
		t.Errorf("%s encodes back as\n%s (%v)", b, out, err)
	}
}

// runLeaseStatusExample: a status payload as documented is read by package
// lease as the lease it shows.
func runLeaseStatusExample(t *testing.T, _ *docsRun, b docBlock, _ string) {
	p, err := nameservice.ParseObject([]byte(b.text))
	must(t, err)
	id, _ := nameservice.ParseID("mydb")
	st := nameservice.Value{V: 2, Payload: p}
	held := lease.Held(&nameservice.Record{ID: id, Meta: nameservice.Meta{Kind: nameservice.Ledger}, Status: &st})
	if len(held) != 1 || held[0].Name != "index" || held[0].Holder != "indexer-7f3a" || held[0].Token != 90 || held[0].Expires != 1705312230 {
		t.Errorf("%s reads as the leases %+v", b, held)
	}
}

// The Go examples are statements (with, at the top, the imports they
// need), run as the body of a function given ctx, an ns over a file store
// holding mydb (head 42), and the stand-ins named in goHarness. They are
// compiled into one program, each in a file of its own, with the imports
// of the packages they name; a variable an example declares and does not
// use is used, an import it does not need dropped, as a reader's editor
// would. The program is built in the module through an overlay, so nothing
// is written into the repository.

// goExamples is the program of the Go examples, built once.
type goExamples struct {
	once   sync.Once
	blocks []docBlock
	bin    string
	err    error
}

// goHarness is the program's main: it runs example os.Args[1].
const goHarness = `package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strconv"

	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/drivers/dynamodb"
	_ "nameservice.dev/nameservice/drivers/all"
)

// givens are what the examples use without making it: stand-ins.
type givens struct {
	tp         *tracenoop.TracerProvider
	mp         metricnoop.MeterProvider
	handler    slog.Handler
	client     *awsdynamodb.Client
	buildIndex func(context.Context, int64) error
	use        func(*nameservice.Record)
}

var examples = map[int]func(context.Context, *nameservice.NameService, *givens) error{}

func main() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "docs-example")
	check(err)
	defer os.RemoveAll(dir)
	ns, err := nameservice.Open(ctx, "file://"+dir)
	check(err)
	check(ns.Init(ctx, "mydb"))
	_, err = ns.PublishCommit(ctx, "mydb", 42, "fluree:s3://b/c/t42.json")
	check(err)
	cfg, err := dynamodb.ParseURL(mustURL("dynamodb://fluree-nameservice?region=eu-west-1"))
	check(err)
	client, err := dynamodb.NewClient(ctx, cfg)
	check(err)
	tp := tracenoop.NewTracerProvider()
	g := &givens{tp: &tp, mp: metricnoop.NewMeterProvider(), handler: slog.NewTextHandler(io.Discard, nil), client: client,
		buildIndex: func(context.Context, int64) error { return nil }, use: func(*nameservice.Record) {}}
	i, err := strconv.Atoi(os.Args[1])
	check(err)
	check(examples[i](ctx, ns, g))
}

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	check(err)
	return u
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "example:", err)
		os.Exit(1)
	}
}
`

// goImports are the packages an example may name without importing them.
var goImports = map[string]string{
	"lease": "nameservice.dev/nameservice/lease", "time": "time", "errors": "errors", "log": "log",
	"dynamodb": "nameservice.dev/nameservice/drivers/dynamodb", "driver": "nameservice.dev/nameservice/driver",
}

// goImportLine matches an import the example makes itself.
var goImportLine = regexp.MustCompile(`^\s*(?:import\s+)?(_|[A-Za-z]\w*)?\s*("[^"]+")`)

// goFile turns example i into a file of the program: its imports, and its
// statements in a function of its own; extra are lines added to its body.
func goFile(i int, text string, extra []string, dropped map[string]bool) string {
	var imports, body []string
	lines := strings.Split(text, "\n")
	inImports := false
	for _, l := range lines {
		trimmed := strings.TrimSpace(l)
		switch {
		case trimmed == "import (":
			inImports = true
		case inImports && trimmed == ")":
			inImports = false
		case inImports || strings.HasPrefix(trimmed, "import "):
			if m := goImportLine.FindStringSubmatch(l); m != nil {
				imports = append(imports, strings.TrimSpace(m[1]+" "+m[2]))
			}
		default:
			body = append(body, l)
		}
	}
	code := strings.Join(body, "\n")
	for name, path := range goImports {
		if regexp.MustCompile(`\b`+name+`\.`).MatchString(code) && !strings.Contains(strings.Join(imports, " "), `"`+path+`"`) {
			imports = append(imports, name+` "`+path+`"`)
		}
	}
	var b strings.Builder
	b.WriteString("package main\n\nimport (\n\t\"context\"\n\n\t\"nameservice.dev/nameservice\"\n")
	for _, imp := range imports {
		path := imp[strings.IndexByte(imp, '"'):]
		if !dropped[path] && path != `"nameservice.dev/nameservice"` {
			b.WriteString("\t" + imp + "\n")
		}
	}
	fmt.Fprintf(&b, ")\n\nfunc init() { examples[%d] = example%d }\n\n", i, i)
	fmt.Fprintf(&b, "func example%d(ctx context.Context, ns *nameservice.NameService, g *givens) error {\n", i)
	b.WriteString("\ttp, mp, handler, client, buildIndex, use := g.tp, g.mp, g.handler, g.client, g.buildIndex, g.use\n")
	b.WriteString("\t_, _, _, _, _, _ = tp, mp, handler, client, buildIndex, use\n\t_ = ctx\n\t{\n")
	b.WriteString(code + "\n" + strings.Join(extra, "\n") + "\n\t}\n\treturn nil\n}\n")
	return b.String()
}

// goUnused matches the compiler's complaints the build fixes itself.
var (
	goUnusedVar    = regexp.MustCompile(`example(\d+)\.go:\d+:\d+: declared and not used: (\w+)`)
	goUnusedImport = regexp.MustCompile(`example(\d+)\.go:\d+:\d+: ("[^"]+") imported(?: as \w+)? and not used`)
)

// build compiles the program: the examples (substituted) in the order of
// blocks, so that example i is blocks[i].
func (g *goExamples) build(t *testing.T, d *docsRun) {
	dir := d.tempDir(t)
	extra := make([][]string, len(g.blocks))
	dropped := make([]map[string]bool, len(g.blocks))
	texts := make([]string, len(g.blocks))
	for i, b := range g.blocks {
		texts[i], dropped[i] = d.substitute(t, b.text), map[string]bool{}
	}
	root, err := filepath.Abs(repoRoot)
	must(t, err)
	pkg := filepath.Join(root, "internal", "docexamples", "prog")
	g.bin = filepath.Join(dir, "examples")
	for attempt := 0; ; attempt++ {
		overlay := map[string]string{filepath.Join(pkg, "main.go"): writeTemp(t, dir, "main.go", goHarness)}
		for i := range g.blocks {
			name := fmt.Sprintf("example%d.go", i)
			overlay[filepath.Join(pkg, name)] = writeTemp(t, dir, name, goFile(i, texts[i], extra[i], dropped[i]))
		}
		ov, _ := json.Marshal(map[string]any{"Replace": overlay})
		ovFile := writeTemp(t, dir, "overlay.json", string(ov))
		out, err := goCommand(root, "build", "-gcflags=-e", "-overlay", ovFile, "-o", g.bin, "./internal/docexamples/prog").CombinedOutput()
		if err == nil {
			return
		}
		fixed := false
		for _, m := range goUnusedVar.FindAllStringSubmatch(string(out), -1) {
			i := atoi(m[1])
			extra[i], fixed = append(extra[i], "_ = "+m[2]), true
		}
		for _, m := range goUnusedImport.FindAllStringSubmatch(string(out), -1) {
			dropped[atoi(m[1])][m[2]], fixed = true, true
		}
		if !fixed || attempt == 4 {
			g.err = fmt.Errorf("the Go examples do not compile: %v\n%s", err, out)
			return
		}
	}
}

func atoi(s string) int {
	n := 0
	fmt.Sscan(s, &n)
	return n
}

func writeTemp(t *testing.T, dir, name, text string) string {
	p := filepath.Join(dir, name)
	must(t, os.WriteFile(p, []byte(text), 0o644))
	return p
}

// runGoExample runs the example in the program of every Go example.
func runGoExample(t *testing.T, d *docsRun, b docBlock, _ string) {
	g := d.goExamples
	g.once.Do(func() { g.build(t, d) })
	if g.err != nil {
		t.Fatal(g.err)
	}
	i := -1
	for j, o := range g.blocks {
		if o == b {
			i = j
		}
	}
	cmd := exec.Command(g.bin, fmt.Sprint(i))
	cmd.Env = d.env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", b, err, out)
	}
}

// runGoTestExample runs README's conformance test of a driver being
// written, over mydriver: a stand-in package opening the memory driver. It
// runs the IDs group of the suite (the whole suite is run on every driver
// by its own tests).
func runGoTestExample(t *testing.T, _ *docsRun, b docBlock, _ string) {
	dir := t.TempDir()
	root, err := filepath.Abs(repoRoot)
	must(t, err)
	pkg := filepath.Join(root, "internal", "docexamples", "mydriver")
	const driverGo = `// Package mydriver stands for a driver being written: the memory driver.
package mydriver

import (
	"context"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/mem"
)

type Config struct{}

func Open(context.Context, Config) (driver.Driver, error) { return mem.NewStore().Open(), nil }
`
	test := "package mydriver_test\n\nimport (\n\t\"context\"\n\t\"testing\"\n\n\t\"nameservice.dev/nameservice/conformance\"\n" +
		"\t\"nameservice.dev/nameservice/driver\"\n\t\"nameservice.dev/nameservice/internal/docexamples/mydriver\"\n)\n\n" +
		"var cfg mydriver.Config\n\n" + b.text
	ov, _ := json.Marshal(map[string]any{"Replace": map[string]string{
		filepath.Join(pkg, "mydriver.go"):      writeTemp(t, dir, "mydriver.go", driverGo),
		filepath.Join(pkg, "mydriver_test.go"): writeTemp(t, dir, "mydriver_test.go", test),
	}})
	bin := filepath.Join(dir, "mydriver.test")
	build := goCommand(root, "test", "-c", "-vet=off", "-o", bin, "-overlay", writeTemp(t, dir, "overlay.json", string(ov)),
		"./internal/docexamples/mydriver")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", b, err, out)
	}
	cmd := exec.Command(bin, "-test.run", "TestConformance/IDs", "-test.v")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestConformance/IDs") {
		t.Fatalf("%s: %v\n%s", b, err, out)
	}
}

// nsv2Stores are file stores, one per layout and dialect docs/format.md
// shows, holding the records its examples describe, written by the driver.
type nsv2Stores struct {
	once sync.Once
	dirs map[string]string // "b spec" → directory
}

// writeFormatRecords writes the records of docs/format.md's examples as a
// writer would: created (mydb at created_at 1700000000, status v3
// indexing; products-search, a Bm25 graph source over products), then
// each other concern pushed, so that every concern file exists.
func writeFormatRecords(t *testing.T, ns *nameservice.NameService) {
	mydb, err := nameservice.ParseID("mydb")
	must(t, err)
	unborn, st := nameservice.Value{}, nameservice.StatusValue(3, "indexing", nameservice.Object{"queue_depth": 2})
	h, i, c := unborn, unborn, unborn
	must(t, ns.Import(docCtx, &nameservice.Record{ID: mydb, Meta: nameservice.Meta{Kind: nameservice.Ledger, CreatedAt: 1700000000},
		Head: &h, Index: &i, Status: &st, Config: &c}))
	ok := func(_ nameservice.Outcome, err error) { must(t, err) }
	ok(ns.PublishCommit(docCtx, "mydb", 42, "fluree:file://mydb/main/commit/t42.json"))
	ok(ns.PublishIndex(docCtx, "mydb", 40, "fluree:file://mydb/main/index/t40.json"))
	cfg := nameservice.Object{"default_context": "fluree:file://ctx.json", "index_threshold": 1000}
	ok(ns.PushConfig(docCtx, "mydb", unborn, nameservice.Value{V: 1, Payload: nameservice.Object{"index_threshold": 500}}))
	ok(ns.PushConfig(docCtx, "mydb", nameservice.Value{V: 1, Payload: nameservice.Object{"index_threshold": 500}}, nameservice.Value{V: 2, Payload: cfg}))
	must(t, ns.PublishGraphSource(docCtx, "products-search", "db:Bm25Index", []string{"products"}, nameservice.Object{"b": 0.75, "k1": 1.2}))
	ok(ns.PublishIndex(docCtx, "products-search", 42, "bafy-index-root"))
}

// incarnations matches the random token a writer puts in its files.
var incarnations = regexp.MustCompile(`"(f|db):incarnation":\s*"[0-9a-f]*"`)

// writeIDs matches the random part of an entry of f:writeIDs ("ID@v").
var writeIDs = regexp.MustCompile(`"[0-9a-f]{16,64}@`)

func (s *nsv2Stores) make(t *testing.T, d *docsRun) {
	s.dirs = map[string]string{}
	for _, c := range []struct {
		name    string
		layout  jsonld.Layout
		dialect jsonld.Dialect
	}{{"b spec", jsonld.LayoutB, jsonld.Spec}, {"b fluree-v4", jsonld.LayoutB, jsonld.FlureeV4}, {"c spec", jsonld.LayoutC, jsonld.Spec}} {
		dir := d.tempDir(t)
		drv, err := fs.Open(docCtx, fs.Config{Dir: dir, Layout: c.layout, Dialect: c.dialect})
		must(t, err)
		ns := nameservice.New(drv, nameservice.WithClock(func() time.Time { return time.Unix(1700000000, 0) }))
		writeFormatRecords(t, ns)
		must(t, ns.Close())
		s.dirs[c.name] = dir
	}
}

// runNSv2Example: a file of docs/format.md ("nsv2 LAYOUT DIALECT PATH") is
// the one the file driver writes for the record it describes.
func runNSv2Example(t *testing.T, d *docsRun, b docBlock, note string) {
	f := strings.Fields(note)
	if len(f) != 3 {
		t.Fatalf("%s: mark nsv2 LAYOUT DIALECT PATH, got %q", b, note)
	}
	d.nsv2.once.Do(func() { d.nsv2.make(t, d) })
	dir, ok := d.nsv2.dirs[f[0]+" "+f[1]]
	if !ok {
		t.Fatalf("%s: no store of layout %s and dialect %s", b, f[0], f[1])
	}
	written, err := os.ReadFile(filepath.Join(dir, "ns@v2", f[2]))
	must(t, err)
	// The token is random: the example's stands for any.
	doc := incarnations.ReplaceAllString(b.text, `"$1:incarnation": "TOKEN"`)
	written = incarnations.ReplaceAll(written, []byte(`"$1:incarnation": "TOKEN"`))
	// So are the write IDs (the example's stand for any), not what follows @.
	doc = writeIDs.ReplaceAllString(doc, `"ID@`)
	written = writeIDs.ReplaceAll(written, []byte(`"ID@`))
	if eq, err := jsonEqual([]byte(doc), written); err != nil || !eq {
		t.Errorf("%s is not the file the driver writes (%v):\n%s", b, err, written)
	}
}

// runURLsExample: every URL of the block (the first word of each line)
// parses as its driver reads it.
func runURLsExample(t *testing.T, _ *docsRun, b docBlock, _ string) {
	parse := map[string]func(*url.URL) error{
		"file":     func(u *url.URL) error { _, err := fs.ParseURL(u); return err },
		"s3":       func(u *url.URL) error { _, err := s3etag.ParseURL(u); return err },
		"gs":       func(u *url.URL) error { _, err := blob.ParseURL(u); return err },
		"azblob":   func(u *url.URL) error { _, err := blob.ParseURL(u); return err },
		"dynamodb": func(u *url.URL) error { _, err := dynamodb.ParseURL(u); return err },
	}
	for _, line := range strings.Split(strings.TrimSpace(b.text), "\n") {
		raw := strings.Fields(line)[0]
		u, err := url.Parse(raw)
		must(t, err)
		p := parse[u.Scheme]
		if p == nil {
			t.Errorf("%s: no driver parses %q", b, raw)
			continue
		}
		if err := p(u); err != nil {
			t.Errorf("%s: %s: %v", b, raw, err)
		}
	}
}

// runTableSpecExample: a table definition of the docs (aws CLI,
// CloudFormation, Terraform) names the keys, index, projection, stream and
// billing of the table the driver makes ("stream": only the stream;
// "lock": the s3 driver's lock table, with its TTL attribute).
func runTableSpecExample(t *testing.T, d *docsRun, b docBlock, note string) {
	what, _, _ := strings.Cut(note, ":")
	table := "fluree-nameservice"
	if what == "lock" {
		table = "ns-locks-docs-" + randomHex(4)
		lc := s3etag.LockConfig{Table: table, Region: "eu-west-1", Endpoint: testenv.DynamoDBEndpoint(t)}
		must(t, lc.Provision(docCtx))
		t.Cleanup(func() { d.dropTable(t, table) })
	}
	c := dynamoClient(t, table)
	desc, err := c.DescribeTable(docCtx, &awsdynamodb.DescribeTableInput{TableName: aws.String(table)})
	must(t, err)
	tbl := desc.Table
	var want []string
	if s := tbl.StreamSpecification; s != nil && aws.ToBool(s.StreamEnabled) {
		want = append(want, string(s.StreamViewType))
	}
	if what != "stream" {
		for _, k := range tbl.KeySchema {
			want = append(want, aws.ToString(k.AttributeName), string(k.KeyType))
		}
		for _, a := range tbl.AttributeDefinitions {
			want = append(want, aws.ToString(a.AttributeName))
		}
		if bm := tbl.BillingModeSummary; bm != nil {
			want = append(want, string(bm.BillingMode))
		}
		for _, g := range tbl.GlobalSecondaryIndexes {
			want = append(want, aws.ToString(g.IndexName), string(g.Projection.ProjectionType))
			wantList(t, b, g.Projection.NonKeyAttributes)
		}
	}
	if what == "lock" {
		ttl, err := c.DescribeTimeToLive(docCtx, &awsdynamodb.DescribeTimeToLiveInput{TableName: aws.String(table)})
		must(t, err)
		want = append(want, aws.ToString(ttl.TimeToLiveDescription.AttributeName))
	}
	text := strings.ToUpper(b.text)
	for _, w := range want {
		if !strings.Contains(text, strings.ToUpper(w)) {
			t.Errorf("%s does not name %q of the table the driver makes", b, w)
		}
	}
}

// wantList checks that the block's list of projected attributes (the
// bracketed list naming branch) is exactly attrs.
func wantList(t *testing.T, b docBlock, attrs []string) {
	m := regexp.MustCompile(`\[([^\[\]]*\bbranch\b[^\[\]]*)\]`).FindStringSubmatch(b.text)
	if m == nil {
		t.Errorf("%s: no list of projected attributes", b)
		return
	}
	var got []string
	for _, a := range strings.Split(m[1], ",") {
		got = append(got, strings.Trim(strings.TrimSpace(a), `"`))
	}
	sort.Strings(got)
	want := append([]string(nil), attrs...)
	sort.Strings(want)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("%s projects %v; the driver's index projects %v", b, got, want)
	}
}

// migrateRun is one ns-migrate run between two file stores built so that
// every action and result of its report appears: books is created, same
// skipped, ahead advanced, old conflicts (the target is ahead), bad fails
// (its source file is corrupt); then the verify pass. Paths are shown as
// the docs show them (/srv/ns for the source).
type migrateRun struct {
	once                   sync.Once
	stdout, stderr, report string
}

func (m *migrateRun) run(t *testing.T, d *docsRun) {
	src, dst := d.tempDir(t), d.tempDir(t)
	script := fmt.Sprintf(`s='file://%[1]s'; d='file://%[2]s'
ns --url "$s" init books; ns --url "$s" publish-commit books 3 fluree:file://books/t3.json
ns --url "$s" init same; ns --url "$s" publish-commit same 7 fluree:file://same/t7.json
ns --url "$s" init ahead; ns --url "$s" publish-commit ahead 3 fluree:file://ahead/t3.json
ns --url "$s" init old; ns --url "$s" publish-commit old 12 fluree:file://old/t12.json
mkdir -p '%[2]s/ns@v2' && cp -r '%[1]s/ns@v2/same' '%[1]s/ns@v2/ahead' '%[1]s/ns@v2/old' '%[2]s/ns@v2/'
ns --url "$s" publish-commit ahead 5 fluree:file://ahead/t5.json
ns --url "$d" publish-commit old 20 fluree:file://old/t20.json
ns --url "$s" init bad; echo '{not json' > '%[1]s/ns@v2/bad/main.json'
`, src, dst)
	if out, err := d.bash(t.TempDir(), script); err != nil {
		t.Fatalf("prepare the migration: %v\n%s", err, out)
	}
	report := filepath.Join(d.tempDir(t), "report.jsonl")
	cmd := exec.Command(filepath.Join(d.bins, "ns-migrate"), "--from", "file://"+src, "--to", "file://"+dst, "--verify", "--report", report)
	cmd.Env = d.env
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); cmd.ProcessState.ExitCode() != 1 {
		t.Fatalf("ns-migrate: %v, want exit 1 (a conflict and a failure)\n%s%s", err, out.String(), errb.String())
	}
	b, err := os.ReadFile(report)
	must(t, err)
	docPaths := strings.NewReplacer(src, "/srv/ns")
	m.stdout, m.stderr, m.report = docPaths.Replace(out.String()), docPaths.Replace(errb.String()), docPaths.Replace(string(b))
}

// runOutputExample: output shown by the docs is what the command named in
// the mark prints, line by line ("..." stands for anything; with "numbers
// vary", so does every number).
func runOutputExample(t *testing.T, d *docsRun, b docBlock, note string) {
	what, vary := note, false
	if w, rest, ok := strings.Cut(note, ";"); ok {
		what, vary = strings.TrimSpace(w), strings.TrimSpace(rest) == "numbers vary"
	}
	var out string
	switch what {
	case "ns-migrate --help":
		o, err := exec.Command(filepath.Join(d.bins, "ns-migrate"), "--help").CombinedOutput()
		must(t, err)
		out = string(o)
	case "migrate stdout", "migrate report":
		d.migrate.once.Do(func() { d.migrate.run(t, d) })
		out = d.migrate.stdout
		if what == "migrate report" {
			out = d.migrate.report
		}
	case "migrate to a missing table":
		src := strings.TrimPrefix(d.subst["file:///var/lib/ns"], "file://")
		cmd := exec.Command(filepath.Join(d.bins, "ns-migrate"), "--from", "file://"+src, "--to", "dynamodb://ns-prod?region=eu-west-1")
		cmd.Env = d.env
		o, err := cmd.CombinedOutput()
		if err == nil {
			t.Fatalf("ns-migrate to a missing table succeeded:\n%s", o)
		}
		out = string(o)
	default:
		t.Fatalf("%s: no command gives the output %q", b, what)
	}
	wantLines(t, b, out, vary)
}

// runTranscriptExample runs each "$ COMMAND" line of a terminal session
// shown by the docs: it must succeed and print what is shown, up to the
// values (the same first word, or JSON with the same keys).
func runTranscriptExample(t *testing.T, d *docsRun, b docBlock, _ string) {
	lines := strings.Split(strings.TrimSpace(b.text), "\n")
	for i, l := range lines {
		command, ok := strings.CutPrefix(l, "$ ")
		if !ok {
			continue
		}
		out, err := d.bash(t.TempDir(), command)
		if err != nil {
			t.Errorf("%s: %s: %v\n%s", b, command, err, out)
			continue
		}
		if i+1 >= len(lines) || strings.HasPrefix(lines[i+1], "$ ") {
			continue // no output shown
		}
		shown, got := lines[i+1], strings.TrimSpace(out)
		var keysShown, keysGot map[string]any
		switch {
		case json.Unmarshal([]byte(shown), &keysShown) == nil:
			if json.Unmarshal([]byte(got), &keysGot) != nil || !keysWithin(keysGot, keysShown) {
				t.Errorf("%s: %s printed %q, not JSON with the keys of %q", b, command, got, shown)
			}
		case strings.Fields(shown)[0] != strings.Fields(got + " ")[0]:
			t.Errorf("%s: %s printed %q, shown as %q", b, command, got, shown)
		}
	}
}

// keysWithin reports whether every key of a is one of b's (a build
// without version control information prints no commit).
func keysWithin(a, b map[string]any) bool {
	for k := range a {
		if _, ok := b[k]; !ok {
			return false
		}
	}
	return true
}

// runBenchExample checks the commands that reproduce the measured figures
// without running them (each takes minutes): the benchmarks and tests a
// `go test` line selects exist in its package, the scripts it names are
// there and parse, and ns-bench runs.
func runBenchExample(t *testing.T, d *docsRun, b docBlock, _ string) {
	root, err := filepath.Abs(repoRoot)
	must(t, err)
	for _, line := range strings.Split(strings.TrimSpace(b.text), "\n") {
		line, _, _ = strings.Cut(line, " #")
		words := shellWords(line)
		for len(words) > 0 && strings.Contains(words[0], "=") {
			words = words[1:] // VAR=value
		}
		switch {
		case len(words) >= 1 && strings.HasPrefix(words[0], "scripts/"):
			if out, err := exec.Command("bash", "-n", filepath.Join(root, words[0])).CombinedOutput(); err != nil {
				t.Errorf("%s: %s: %v\n%s", b, words[0], err, out)
			}
		case len(words) >= 3 && words[0] == "go" && words[1] == "run" && words[2] == "./cmd/ns-bench":
			if out, err := exec.Command(filepath.Join(d.bins, "ns-bench"), "--help").CombinedOutput(); err != nil {
				t.Errorf("%s: ns-bench --help: %v\n%s", b, err, out)
			}
		case len(words) >= 3 && words[0] == "go" && words[1] == "test":
			pattern, kind := flagValue(words, "-bench"), "Benchmark"
			if pattern == "" {
				pattern, kind = flagValue(words, "-run"), "Test"
			}
			pkg := words[len(words)-1]
			names, err := declaredTests(filepath.Join(root, pkg), kind)
			re, reErr := regexp.Compile(pattern)
			if err != nil || reErr != nil || !slices.ContainsFunc(names, re.MatchString) {
				t.Errorf("%s: %s selects no %s in %s (%v, %v; it declares %v)", b, line, kind, pkg, err, reErr, names)
			}
		default:
			t.Errorf("%s: no check for %q", b, line)
		}
	}
}

// declaredTests returns the names of the functions go test would run as
// kind ("Test" or "Benchmark") in the package in dir: its _test.go files'
// top-level func KindXxx(*testing.T or *testing.B). It reads the sources
// rather than compiling a test binary for `go test -list` (each costs
// seconds to minutes; the suite's own run compiles every one of them).
func declaredTests(dir, kind string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no test files in %s (%v)", dir, err)
	}
	param := map[string]string{"Test": "T", "Benchmark": "B"}[kind]
	var names []string
	for _, file := range files {
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !isTestName(fn.Name.Name, kind) || len(fn.Type.Params.List) != 1 {
				continue
			}
			if star, ok := fn.Type.Params.List[0].Type.(*ast.StarExpr); ok {
				if sel, ok := star.X.(*ast.SelectorExpr); ok && sel.Sel.Name == param {
					names = append(names, fn.Name.Name)
				}
			}
		}
	}
	return names, nil
}

// isTestName reports whether name is kind followed by nothing or by a
// character that is not a lower-case letter, as go test requires.
func isTestName(name, kind string) bool {
	rest, ok := strings.CutPrefix(name, kind)
	if !ok {
		return false
	}
	r, _ := utf8.DecodeRuneInString(rest)
	return rest == "" || !unicode.IsLower(r)
}

// flagValue returns the value of flag name in words ("" when absent).
func flagValue(words []string, name string) string {
	for i, w := range words {
		if w == name && i+1 < len(words) {
			return words[i+1]
		}
	}
	return ""
}
