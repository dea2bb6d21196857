package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/remote"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/server/auth"
)

// buildNS returns this command, built once per test process.
func buildNS(t *testing.T) string { return testenv.NSBinary(t) }

// serveProcess is a running "ns serve".
type serveProcess = testenv.ServeProcess

// startServe runs "ns --url backend serve --listen 127.0.0.1:0 args..." and
// waits for the URL it prints.
func startServe(t *testing.T, bin, backend string, args ...string) *serveProcess {
	t.Helper()
	return testenv.StartServe(t, bin, backend, args...)
}

// stopServe sends SIGTERM and requires a clean exit (graceful shutdown).
func stopServe(t *testing.T, p *serveProcess) {
	t.Helper()
	if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ns serve exited with %v after SIGTERM; stderr %s", err, p.Stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("ns serve did not stop within 30s of SIGTERM")
	}
}

// TestServeTwoInstancesOneTable runs two ns serve processes over one
// DynamoDB Local table; 16 clients, half on each, race compare-and-set
// increments of a counter in one record's status. Every increment that
// reports applied must be counted exactly once.
func TestServeTwoInstancesOneTable(t *testing.T) {
	t.Parallel() // long: runs beside the other long tests
	endpoint := testenv.DynamoDBEndpoint(t)
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	backend := "dynamodb://ns-serve-" + hex.EncodeToString(b) + "?region=us-east-1&endpoint=" + url.QueryEscape(endpoint)
	c := &cli{t: t, url: backend}
	c.want(exitOK, "table", "create")
	c.want(exitOK, "init", "counter")
	bin := buildNS(t)
	servers := []*serveProcess{startServe(t, bin, backend, "--insecure-no-auth"), startServe(t, bin, backend, "--insecure-no-auth")}

	const clients, each = 16, 8
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i := range clients {
		d, err := remote.Open(context.Background(), remote.Config{BaseURL: servers[i%2].URL})
		if err != nil {
			t.Fatal(err)
		}
		ns := nameservice.New(d)
		defer ns.Close()
		wg.Go(func() {
			for done := 0; done < each; {
				cur, err := ns.StatusOf(ctx, "counter")
				if err != nil {
					errs <- err
					return
				}
				n, _ := cur.Payload.Int("count")
				// "by" makes each client's value its own: a resend after a
				// lost answer is then resolved exactly (the server reports a
				// resend applied when the current value equals its own).
				next := nameservice.StatusValue(cur.V+1, "ready", nameservice.Object{"count": n + 1, "by": i})
				out, err := ns.PushStatus(ctx, "counter", cur, next)
				if err != nil {
					errs <- err
					return
				}
				if out.Applied {
					done++
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	check, err := remote.Open(context.Background(), remote.Config{BaseURL: servers[1].URL})
	if err != nil {
		t.Fatal(err)
	}
	final, err := nameservice.New(check).StatusOf(ctx, "counter")
	if err != nil {
		t.Fatal(err)
	}
	count, _ := final.Payload.Int("count")
	if count != clients*each || final.V != 1+clients*each {
		t.Fatalf("final status v%d count %d, want v%d count %d", final.V, count, 1+clients*each, clients*each)
	}
	for _, s := range servers {
		stopServe(t, s)
	}
}

// Without auth the server refuses to listen beyond loopback, and with
// neither tokens nor issuers it refuses to start.
func TestServeAuthIsOnByDefault(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"--url", "mem://", "serve", "--listen", "0.0.0.0:0", "--insecure-no-auth"}, &out, &errb)
	if code != exitUsage || !strings.Contains(errb.String(), "loopback") {
		t.Fatalf("--insecure-no-auth on 0.0.0.0: exit %d, %s", code, errb.String())
	}
	errb.Reset()
	code = run(context.Background(), []string{"--url", "mem://", "serve", "--listen", "127.0.0.1:0"}, &out, &errb)
	if code != exitUsage || !strings.Contains(errb.String(), "--tokens") {
		t.Fatalf("no auth configured: exit %d, %s", code, errb.String())
	}
}

// A limit or a duration that is not positive is a usage error naming the
// flag, refused before listening: the server would run with its default.
func TestServeLimitsMustBePositive(t *testing.T) {
	for _, bad := range [][]string{{"--max-body", "0"}, {"--max-conns", "-5"}, {"--max-streams-per-principal", "0"}, {"--write-timeout", "0s"}, {"--poll-interval", "-1s"}} {
		var out, errb bytes.Buffer
		args := append([]string{"--url", "mem://", "serve", "--listen", "127.0.0.1:0", "--insecure-no-auth"}, bad...)
		code := run(context.Background(), args, &out, &errb)
		if code != exitUsage || !strings.Contains(errb.String(), bad[0]+" must be positive") {
			t.Errorf("serve %s %s: exit %d, %q; want a usage error naming it", bad[0], bad[1], code, errb.String())
		}
	}
}

// A token file with a bad entry is refused before listening, naming it.
func TestServeBadTokenFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "tokens.json")
	if err := os.WriteFile(p, []byte(`{"tokens":[{"name":"x","sha256":"plain-token"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"--url", "mem://", "serve", "--tokens", p}, &out, &errb)
	if code == exitOK || !strings.Contains(errb.String(), `token "x"`) || strings.Contains(errb.String(), "plain-token") {
		t.Fatalf("bad token file: exit %d, %s", code, errb.String())
	}
}

// The served process authenticates with a static token from a file.
func TestServeProcessWithTokens(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.json")
	tok := "tok-" + hex.EncodeToString([]byte("0123456789abcdef"))
	if err := os.WriteFile(tokens, []byte(fmt.Sprintf(`{"tokens":[{"name":"ops","sha256":%q,"read":[""],"write":[""]}]}`, auth.HashToken(tok))), 0o600); err != nil {
		t.Fatal(err)
	}
	tokFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokFile, []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, buildNS(t), "mem://served", "--tokens", tokens)
	anon := &cli{t: t, url: p.URL}
	if code, _, errs := anon.run("init", "db"); code == exitOK || !strings.Contains(errs, "Bearer token required") {
		t.Fatalf("init without a token: exit %d, %s", code, errs)
	}
	c := &cli{t: t, url: p.URL + "?token_file=" + url.QueryEscape(tokFile)}
	c.want(exitOK, "init", "tenant/db")
	c.want(exitOK, "publish-commit", "tenant/db", "3", "c3")
	c.want(exitNotApplied, "publish-commit", "tenant/db", "2", "c2")
	if out := c.want(exitOK, "lookup", "tenant/db", "--json"); !strings.Contains(out, `"head":{"v":3,"payload":{"address":"c3","t":3}}`) {
		t.Fatalf("lookup = %s", out)
	}
	stopServe(t, p)
	if strings.Contains(p.Stderr.String(), tok) {
		t.Fatal("the server logged the token")
	}
	if !strings.Contains(p.Stderr.String(), `"principal":"ops"`) {
		t.Fatalf("the request log lacks the principal's name: %s", p.Stderr)
	}
}

// Two tokens with one hash in --tokens: ns serve refuses to start, naming
// both entries by line (before, it served and the last one won).
func TestServeDuplicateTokenHash(t *testing.T) {
	p := filepath.Join(t.TempDir(), "tokens.json")
	h := auth.HashToken("shared-secret")
	file := "{\"tokens\": [\n" +
		"  {\"name\": \"tenant-a\", \"sha256\": \"" + h + "\", \"read\": [\"a/\"], \"write\": [\"a/\"]},\n" +
		"  {\"name\": \"ops\", \"sha256\": \"" + auth.HashToken("other") + "\", \"read\": [\"\"]},\n" +
		"  {\"name\": \"admin\", \"sha256\": \"" + strings.ToUpper(h) + "\", \"read\": [\"\"], \"write\": [\"\"]}\n" +
		"]}\n"
	if err := os.WriteFile(p, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(buildNS(t), "--url", "mem://", "serve", "--listen", "127.0.0.1:0", "--tokens", p)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	done := make(chan error, 1)
	go func() { done <- cmd.Run() }()
	select {
	case err := <-done:
		want := `token "admin" (line 4): the same sha256 as token "tenant-a" (line 2)`
		if err == nil || !strings.Contains(stderr.String(), want) {
			t.Fatalf("ns serve: %v, stderr %s; want a refusal containing %s", err, stderr.String(), want)
		}
		if strings.Contains(stderr.String(), h) {
			t.Fatal("the refusal shows the hash")
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("ns serve started with two tokens of one hash")
	}
}

// Two instances given one --page-token-key accept each other's page
// tokens, as they must behind one load balancer; a key shorter than 32
// bytes is refused at start.
func TestServePageTokenKeyShared(t *testing.T) {
	dir := t.TempDir()
	backend := "file://" + dir
	c := &cli{t: t, url: backend}
	for _, n := range []string{"a", "b", "c"} {
		c.want(exitOK, "init", n)
	}
	keys := t.TempDir()
	keyFile := filepath.Join(keys, "page-token.key")
	if err := os.WriteFile(keyFile, []byte("5f2b7c9e4a1d3f6b8c0e2a4d6f8b0c2e4a6d8f0b2c4e6a8d0f2b4c6e8a0d2f4b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := buildNS(t)
	s1 := startServe(t, bin, backend, "--insecure-no-auth", "--page-token-key", keyFile)
	s2 := startServe(t, bin, backend, "--insecure-no-auth", "--page-token-key", keyFile)
	d1, d2 := mustRemote(t, s1.URL), mustRemote(t, s2.URL)
	first, err := d1.List(context.Background(), driver.ListOptions{PageSize: 1})
	if err != nil || len(first.Records) != 1 || first.NextPageToken == "" {
		t.Fatalf("first page: %+v, %v", first, err)
	}
	rest, err := d2.List(context.Background(), driver.ListOptions{PageSize: 5, PageToken: first.NextPageToken})
	if err != nil || len(rest.Records) != 2 || rest.Records[0].ID.Name != "b" {
		t.Fatalf("the other instance on the first one's token: %+v, %v", rest, err)
	}

	short := filepath.Join(keys, "short.key")
	if err := os.WriteFile(short, []byte("too short"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"--url", "mem://", "serve", "--insecure-no-auth", "--listen", "127.0.0.1:0", "--page-token-key", short}, &out, &errb)
	if code != exitUsage || !strings.Contains(errb.String(), "at least 32") {
		t.Fatalf("a short key: exit %d, %s", code, errb.String())
	}
}

func mustRemote(t *testing.T, u string) *remote.Driver {
	t.Helper()
	d, err := remote.Open(context.Background(), remote.Config{BaseURL: u})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}
