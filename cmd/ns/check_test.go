package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"cloud.google.com/go/storage"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"google.golang.org/api/option"

	"github.com/jstemmer/go-junit-report/v2/junit"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/conformance"
	"nameservice.dev/nameservice/drivers/mem"
	"nameservice.dev/nameservice/drivers/s3etag"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/server"
)

// TestMain lets a test run this binary as the ns command: the interrupt
// test sends a real SIGINT to such a process.
func TestMain(m *testing.M) {
	if os.Getenv("NS_TEST_AS_MAIN") == "1" {
		main()
	}
	os.Exit(m.Run())
}

// checkRun is one ns check run and what it left.
type checkRun struct {
	code   int
	out    string
	errs   string
	prefix string
}

// checks lets one ns check run at a time (beside the package's other
// tests): two at once, on a busy machine, load the servers until the
// suite's timed cases (branch creates within the protocol's 20 s window)
// miss.
var checks = make(chan struct{}, 1)

// runCheckCmd runs ns check on storeURL under a prefix of the test's own,
// after putting a record outside that prefix, and checks the run's promises
// on the store: the outside record is untouched and nothing remains under
// the prefix.
func runCheckCmd(t *testing.T, storeURL string, args ...string) checkRun {
	t.Helper()
	checks <- struct{}{}
	defer func() { <-checks }()
	ctx := context.Background()
	ns, err := nameservice.Open(ctx, storeURL)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	keep := "keep-" + randomHex(4)
	if err := ns.Init(ctx, keep); err != nil {
		t.Fatal(err)
	}
	if _, err := ns.PublishCommit(ctx, keep, 4, "c4"); err != nil {
		t.Fatal(err)
	}
	before := lookupJSON(t, ns, keep)

	prefix := "nscheck-test-" + randomHex(4) + "/"
	var out, errb strings.Builder
	code := run(ctx, append([]string{"check", storeURL, "--prefix", prefix}, args...), &out, &errb)
	r := checkRun{code: code, out: out.String(), errs: errb.String(), prefix: prefix}
	t.Logf("ns check %s: exit %d\n%s%s", strings.Join(args, " "), code, r.out, r.errs)

	if after := lookupJSON(t, ns, keep); after != before {
		t.Errorf("the record outside the prefix changed:\nbefore %s\nafter  %s", before, after)
	}
	wantNothingUnder(t, ns, prefix)
	if left, _ := leftovers(t, storeURL, prefix); len(left) > 0 {
		t.Errorf("ns check left %d objects under %s: %v", len(left), prefix, left)
	}
	return r
}

func lookupJSON(t *testing.T, ns *nameservice.NameService, id string) string {
	t.Helper()
	r, err := ns.Lookup(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func wantNothingUnder(t *testing.T, ns *nameservice.NameService, prefix string) {
	t.Helper()
	for r, err := range ns.List(context.Background(), nameservice.ListOptions{Prefix: prefix, IncludeRetracted: true}) {
		if err != nil {
			t.Errorf("list under %s after the run: %v", prefix, err)
			return
		}
		t.Errorf("record left under %s after the run: %s", prefix, r.ID)
	}
}

// groupLine matches a group's progress line.
var groupLine = regexp.MustCompile(`(?m)^(PASS|FAIL|SKIP) (\w+) \(`)

// wantPassed checks a passing run: exit 0, every group passed but the
// corrupting one, which is skipped with a note.
func wantPassed(t *testing.T, r checkRun) {
	t.Helper()
	if r.code != exitOK {
		t.Fatalf("ns check: exit %d, want 0\n%s%s", r.code, r.out, r.errs)
	}
	lines := groupLine.FindAllStringSubmatch(r.out, -1)
	if len(lines) < 14 {
		t.Fatalf("%d group lines, want one per group:\n%s", len(lines), r.out)
	}
	for _, l := range lines {
		switch {
		case l[2] == "Unreadable" && l[1] == "SKIP":
		case l[1] != "PASS":
			t.Errorf("group %s: %s, want PASS", l[2], l[1])
		}
	}
	if !strings.Contains(r.out, "SKIP Unreadable (4 cases): a live store cannot be corrupted safely") {
		t.Errorf("no note on the skipped Unreadable group:\n%s", r.out)
	}
}

// wantGroupsPassed checks a passing run of --group list: exit 0, a line
// for the probe (probed stores) and one per group of list, in the suite's
// order, each PASS, and no other group.
func wantGroupsPassed(t *testing.T, r checkRun, probed bool, list string) {
	t.Helper()
	if r.code != exitOK {
		t.Fatalf("ns check: exit %d, want 0\n%s%s", r.code, r.out, r.errs)
	}
	var want, got []string
	if probed {
		want = append(want, "PASS Probe")
	}
	for _, g := range conformance.GroupNames() {
		if slices.Contains(strings.Split(list, ","), g) {
			want = append(want, "PASS "+g)
		}
	}
	for _, l := range groupLine.FindAllStringSubmatch(r.out, -1) {
		got = append(got, l[1]+" "+l[2])
	}
	if !slices.Equal(got, want) {
		t.Errorf("group lines %q, want %q:\n%s", got, want, r.out)
	}
}

// TestCheckGroupUnknown: a --group the suite lacks is a usage error that
// names the groups there are, before anything is written.
func TestCheckGroupUnknown(t *testing.T) {
	var out, errb strings.Builder
	code := run(context.Background(), []string{"check", "mem://check-unknown-group", "--group", "Lifecycle,Nope"}, &out, &errb)
	if code != exitUsage || !strings.Contains(errb.String(), `no group "Nope"; its groups: `+strings.Join(conformance.GroupNames(), ", ")) {
		t.Fatalf("exit %d, stderr %q; want %d naming the groups", code, errb.String(), exitUsage)
	}
	if out.Len() != 0 {
		t.Errorf("a usage error printed on stdout: %q", out.String())
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// junit reads a JUnit report.
func readJUnit(t *testing.T, path string) junit.Testsuites {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var j junit.Testsuites
	if err := xml.Unmarshal(b, &j); err != nil {
		t.Fatalf("JUnit report does not parse: %v\n%s", err, b)
	}
	return j
}

func TestCheckMemFullSuite(t *testing.T) {
	t.Parallel() // long: runs beside the other long tests
	junit := filepath.Join(t.TempDir(), "report.xml")
	r := runCheckCmd(t, fmt.Sprintf("mem://check-%d", stores.Add(1)), "--junit", junit)
	wantPassed(t, r)
	j := readJUnit(t, junit)
	if j.Tests < 100 || j.Failures != 0 || j.Skipped != 4 {
		t.Errorf("JUnit: %d tests, %d failures, %d skipped; want the whole suite, 0, 4", j.Tests, j.Failures, j.Skipped)
	}
	for _, s := range j.Suites {
		if len(s.Testcases) != s.Tests || s.Properties == nil || len(*s.Properties) != 1 || (*s.Properties)[0].Value == "" {
			t.Errorf("JUnit suite %s: %d cases for tests=%d, properties %v", s.Name, len(s.Testcases), s.Tests, s.Properties)
		}
	}
}

func TestCheckQuickIsASubset(t *testing.T) {
	t.Parallel() // long: runs beside the other long tests
	junit := filepath.Join(t.TempDir(), "report.xml")
	wantPassed(t, runCheckCmd(t, fmt.Sprintf("mem://check-%d", stores.Add(1)), "--quick", "--junit", junit))
	if j := readJUnit(t, junit); j.Tests < 20 || j.Tests > 60 {
		t.Errorf("quick run has %d cases, want a subset of the suite", j.Tests)
	}
}

// TestCheckFileFullSuite: the whole suite through ns check on files (half
// a minute). The whole suite on DynamoDB runs in drivers/dynamodb
// (TestConformance); through ns check it took over 13 minutes on a loaded
// CI machine, so TestCheckDynamoDB runs the quick subset.
func TestCheckFileFullSuite(t *testing.T) {
	t.Parallel() // long: runs beside the other long tests
	wantPassed(t, runCheckCmd(t, "file://"+filepath.ToSlash(t.TempDir())))
}

// TestCheckDynamoDB: ns check drives a DynamoDB table through the
// probe and the groups whose requests differ per store (conditional
// updates, creates and purges, the stream, the lease's CAS). Every group
// runs on DynamoDB Local in drivers/dynamodb (TestConformance); the rest
// of --quick here took three minutes of a loaded machine.
func TestCheckDynamoDB(t *testing.T) {
	t.Parallel() // long: runs beside the other long tests
	endpoint := testenv.DynamoDBEndpoint(t)
	u := "dynamodb://ns-check-" + randomHex(4) + "?region=us-east-1&endpoint=" + url.QueryEscape(endpoint)
	(&cli{t: t, url: u}).want(exitOK, "table", "create")
	const groups = "Lifecycle,Publish,CompareAndSetRef,PushStatus,PushConfig,Watch,Lease"
	wantGroupsPassed(t, runCheckCmd(t, u, "--quick", "--group", groups), true, groups)
}

func s3Bucket(t *testing.T, endpoint string) string {
	t.Helper()
	bucket := "ns-check-" + randomHex(4)
	client, err := s3etag.NewClient(context.Background(), s3etag.Config{Bucket: bucket, Region: "us-east-1", Endpoint: endpoint, PathStyle: true, Layout: jsonld.LayoutB})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatalf("create bucket: %v", err)
	}
	return bucket
}

func TestCheckS3(t *testing.T) {
	t.Parallel() // long: runs beside the other long tests
	endpoint := testenv.S3Endpoint(t)
	u := "s3://" + s3Bucket(t, endpoint) + "?path_style=true&region=us-east-1&endpoint=" + url.QueryEscape(endpoint)
	r := runCheckCmd(t, u, "--quick")
	wantPassed(t, r)
	if !strings.Contains(r.out, "PASS Probe (1 case") {
		t.Errorf("no passing probe line:\n%s", r.out)
	}
	if want := "note: PreconditionsEnforced: " + s3etag.ProbeCreate + ": enforced; " + s3etag.ProbeUpdate + ": enforced; " +
		s3etag.ProbeDelete + ": enforced (not relied on)"; !strings.Contains(r.out, want) {
		t.Errorf("the probe's findings are not printed (want %q):\n%s", want, r.out)
	}
}

// TestCheckS3IgnoringDeleteIfMatch: on a store that ignores If-Match on
// DeleteObject (versitygw behind a proxy that drops it) the groups that
// delete pass in full, the race of purges and creates included, and the
// probe's finding is printed. The whole suite runs on such a store in
// drivers/s3etag (TestConformanceDeleteIfMatchIgnored).
func TestCheckS3IgnoringDeleteIfMatch(t *testing.T) {
	t.Parallel() // long: runs beside the other long tests
	endpoint := testenv.S3Endpoint(t)
	proxy := testenv.S3IgnoringDeletePreconditions(t, endpoint, testenv.Credentials)
	u := "s3://" + s3Bucket(t, endpoint) + "?path_style=true&region=us-east-1&endpoint=" + url.QueryEscape(proxy)
	const groups = "Lifecycle,Concurrency,Branches,Collect,PurgeRacesCreate"
	r := runCheckCmd(t, u, "--group", groups)
	wantGroupsPassed(t, r, true, groups)
	for _, want := range []string{s3etag.ProbeDelete + ": ignored (not relied on)", "PASS PurgeRacesCreate (1 case"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("output lacks %q:\n%s", want, r.out)
		}
	}
}

// TestCheckFailsOnStoreIgnoringPreconditions: versitygw behind a proxy that
// drops If-Match and If-None-Match, opened with unsafe=true, fails the probe,
// which names the missing feature once, and stops there, in the output and
// in JUnit.
func TestCheckFailsOnStoreIgnoringPreconditions(t *testing.T) {
	t.Parallel() // long: runs beside the other long tests
	endpoint := testenv.S3Endpoint(t)
	proxy := testenv.S3IgnoringPreconditions(t, endpoint, testenv.Credentials)
	u := "s3://" + s3Bucket(t, endpoint) + "?path_style=true&region=us-east-1&unsafe=true&endpoint=" + url.QueryEscape(proxy)
	junit := filepath.Join(t.TempDir(), "report.xml")
	r := runCheckCmd(t, u, "--quick", "--junit", junit)
	if r.code != exitError {
		t.Fatalf("exit %d, want %d", r.code, exitError)
	}
	for _, want := range []string{
		"FAIL Probe (1 of 1 cases failed",
		"guarantee broken: " + probeGuarantee,
		"PreconditionsEnforced: missing or not enforced: PutObject If-None-Match",
		"the suite was not run: the store lacks what the driver relies on",
	} {
		if !strings.Contains(r.out, want) {
			t.Errorf("output lacks %q:\n%s", want, r.out)
		}
	}
	// It stops at the probe: no case of the suite runs, and the missing
	// feature is named once.
	if strings.Contains(r.out, "PASS ") || len(regexp.MustCompile(`(?m)^.*PutObject If-None-Match.*$`).FindAllString(r.out, -1)) != 1 {
		t.Errorf("the suite ran after a failed probe, or the finding repeats:\n%s", r.out)
	}
	if !strings.Contains(r.errs, "check failed") || !strings.Contains(r.errs, "Probe (what the driver relies on") {
		t.Errorf("stderr %q does not name the broken guarantee", r.errs)
	}
	// The JUnit report lists exactly the probe's failure, with its
	// guarantee.
	var failed []string
	for _, s := range readJUnit(t, junit).Suites {
		for _, c := range s.Testcases {
			if c.Failure == nil {
				continue
			}
			failed = append(failed, c.Name)
			if !strings.HasPrefix(c.Failure.Message, (*s.Properties)[0].Value+": ") || c.Failure.Data == "" {
				t.Errorf("JUnit failure of %s/%s: message %q, text %q", s.Name, c.Name, c.Failure.Message, c.Failure.Data)
			}
		}
	}
	if len(failed) != 1 || failed[0] != "PreconditionsEnforced" {
		t.Errorf("JUnit failures %v, want the probe's alone", failed)
	}
}

// TestCheckLockModeOnStoreIgnoringPreconditions: the same store in lock
// mode passes, the probe's finding printed as a note.
func TestCheckLockModeOnStoreIgnoringPreconditions(t *testing.T) {
	t.Parallel() // long: runs beside the other long tests
	endpoint, dynamo := testenv.S3Endpoint(t), testenv.DynamoDBEndpoint(t)
	creds := testenv.Credentials
	proxy := testenv.S3IgnoringPreconditions(t, endpoint, creds)
	lc := s3etag.LockConfig{Table: "ns-check-locks-" + randomHex(4), Region: "us-east-1", Endpoint: dynamo, Credentials: creds}
	if err := lc.Provision(context.Background()); err != nil {
		t.Fatal(err)
	}
	lock := "dynamodb://" + lc.Table + "?region=us-east-1&endpoint=" + url.QueryEscape(dynamo)
	u := "s3://" + s3Bucket(t, endpoint) + "?path_style=true&region=us-east-1&endpoint=" + url.QueryEscape(proxy) + "&lock=" + url.QueryEscape(lock)
	r := runCheckCmd(t, u, "--quick")
	wantPassed(t, r)
	if !strings.Contains(r.out, "note: PreconditionsEnforced: missing or not enforced: PutObject If-None-Match") {
		t.Errorf("no note on the ignored preconditions:\n%s", r.out)
	}
}

func TestCheckGCS(t *testing.T) {
	endpoint := testenv.GCSEndpoint(t)
	ctx := context.Background()
	c, err := storage.NewClient(ctx, option.WithEndpoint(endpoint+"/storage/v1/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	bucket := "ns-check-" + randomHex(4)
	if err := c.Bucket(bucket).Create(ctx, "test", nil); err != nil {
		t.Fatalf("create bucket: %v", err)
	}
	t.Setenv("STORAGE_EMULATOR_HOST", strings.TrimPrefix(endpoint, "http://"))
	r := runCheckCmd(t, "gs://"+bucket, "--quick")
	wantPassed(t, r)
	if !strings.Contains(r.out, "PASS Probe (1 case") {
		t.Errorf("no passing probe line:\n%s", r.out)
	}
}

func TestCheckAzure(t *testing.T) {
	endpoint := testenv.AzureEndpoint(t)
	const account, key = "devstoreaccount1", "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
	cred, err := azblob.NewSharedKeyCredential(account, key)
	if err != nil {
		t.Fatal(err)
	}
	name := "ns-check-" + randomHex(4)
	c, err := container.NewClientWithSharedKeyCredential(strings.TrimSuffix(endpoint, "/")+"/"+account+"/"+name, cred, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(context.Background(), nil); err != nil {
		t.Fatalf("create container: %v", err)
	}
	t.Cleanup(func() { _, _ = c.Delete(context.Background(), nil) })
	t.Setenv("AZURE_STORAGE_ACCOUNT", account)
	t.Setenv("AZURE_STORAGE_KEY", key)
	u := "azblob://" + name + "?protocol=http&localemu=true&domain=" + strings.TrimPrefix(endpoint, "http://")
	wantPassed(t, runCheckCmd(t, u, "--quick"))
}

// TestCheckRefusesAUsedPrefix: the final purge would remove records that
// were there before, so a prefix holding any is refused.
func TestCheckRefusesAUsedPrefix(t *testing.T) {
	c := newCLI(t)
	c.want(exitOK, "init", "mine/db")
	var out, errb strings.Builder
	if code := run(context.Background(), []string{"check", c.url, "--prefix", "mine"}, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), "already holds records") {
		t.Fatalf("check under a used prefix: exit %d, stderr %q", code, errb.String())
	}
	c.want(exitOK, "lookup", "mine/db")
}

// TestCheckInterruptedLeavesNothing sends SIGINT to a running ns check (this
// test binary run as ns) on a directory store: it stops, purges its prefix
// and collects what the purges left (leaving no file) and exits 1.
func TestCheckInterruptedLeavesNothing(t *testing.T) {
	t.Parallel() // long: runs beside the other long tests
	dir := t.TempDir()
	u := "file://" + filepath.ToSlash(dir)
	prefix := "nscheck-int-" + randomHex(4) + "/"
	cmd := exec.Command(os.Args[0], "check", u, "--prefix", prefix)
	cmd.Env = append(os.Environ(), "NS_TEST_AS_MAIN=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb strings.Builder
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	var out strings.Builder
	signalled := false
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
		// Records are written by now: interrupt after the first passing group.
		if !signalled && strings.HasPrefix(sc.Text(), "PASS ") {
			ns, err := nameservice.Open(context.Background(), u)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, err := range ns.List(context.Background(), nameservice.ListOptions{Prefix: prefix, IncludeRetracted: true}) {
				if err == nil {
					n++
				}
			}
			ns.Close()
			if n == 0 {
				t.Errorf("no records under %s after a passing group", prefix)
			}
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			signalled = true
		}
	}
	err = cmd.Wait()
	t.Logf("stdout:\n%sstderr: %s", out.String(), errb.String())
	if !signalled {
		t.Fatalf("no group passed before the run ended (%v)", err)
	}
	if cmd.ProcessState.ExitCode() != exitError || !strings.Contains(out.String(), "interrupted; removing the records under "+prefix) {
		t.Fatalf("after SIGINT: exit %d, want %d and a note on the purge", cmd.ProcessState.ExitCode(), exitError)
	}
	ns, err := nameservice.Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	wantNothingUnder(t, ns, prefix)
	if left, _ := leftovers(t, u, prefix); len(left) > 0 {
		t.Errorf("the interrupted check left %d files under %s: %v", len(left), prefix, left)
	}
}

func TestCheckDocstoreMem(t *testing.T) {
	t.Parallel() // long: runs beside the other long tests
	wantPassed(t, runCheckCmd(t, fmt.Sprintf("docstore+mem://check-%d", stores.Add(1)), "--quick"))
}

// TestCheckService runs ns check through the http:// driver against a real
// ns serve handler on a loopback listener, over a memory store.
func TestCheckService(t *testing.T) {
	t.Parallel() // long: runs beside the other long tests
	srv := server.New(nameservice.New(mem.NewStore().Open()), server.Options{NoAuth: true})
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { hs.Close(); _ = srv.Close() })
	wantPassed(t, runCheckCmd(t, hs.URL, "--quick"))
}
