package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/server/auth"
)

// testCID returns a CIDv1 (dag-cbor, sha2-256, base32 lower case) from seed.
func testCID(seed string) string { return testenv.CID(seed) }

// A Fluree peer subscribes to ns serve's events as it would to a Fluree
// transaction server's: GET /v1/fluree/events?all=true, Accept:
// text/event-stream, with or without --peer-events-token. By default the
// route needs a token (401, which a peer takes as fatal); with --events-auth
// none a peer without one gets the stream; the other routes still need a
// token.
func TestServeEventsAuthForPeers(t *testing.T) {
	tokens := filepath.Join(t.TempDir(), "tokens.json")
	entry := fmt.Sprintf(`{"tokens":[{"name":"writer","sha256":%q,"read":[""],"write":[""]}]}`, auth.HashToken("writer-secret"))
	if err := os.WriteFile(tokens, []byte(entry), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := buildNS(t)
	for _, mode := range []string{"", "required", "optional", "none"} {
		args := []string{"--tokens", tokens}
		if mode != "" {
			args = append(args, "--events-auth", mode)
		}
		p := startServe(t, bin, "mem://peer", args...)
		call := func(method, path, token, body string) *http.Response {
			t.Helper()
			req, _ := http.NewRequest(method, p.URL+path, strings.NewReader(body))
			if body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			req.Header.Set("Accept", "text/event-stream")
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { resp.Body.Close() })
			return resp
		}
		c := testCID("c1")
		if resp := call("POST", "/v1/fluree/nameservice/refs/db:main/commit", "writer-secret", `{"expected":null,"new":{"id":"`+c+`","t":1}}`); resp.StatusCode != 200 {
			t.Fatalf("%q: commit: %d", mode, resp.StatusCode)
		}
		resp := call("GET", "/v1/fluree/events?all=true", "", "")
		open := mode == "optional" || mode == "none"
		switch {
		case !open && resp.StatusCode != http.StatusUnauthorized:
			t.Fatalf("events auth %q: a peer without a token got %d, want 401", mode, resp.StatusCode)
		case open && resp.StatusCode != http.StatusOK:
			t.Fatalf("events auth %q: a peer without a token got %d, want 200", mode, resp.StatusCode)
		case open:
			first := readEvent(t, resp)
			if !strings.HasPrefix(first, "event: ns-record\nid: ledger:db:main:1:0\n") || !strings.Contains(first, c) {
				t.Fatalf("events auth %q: first event %q", mode, first)
			}
		}
		if resp := call("GET", "/v1/fluree/events?all=true", "writer-secret", ""); resp.StatusCode != http.StatusOK {
			t.Fatalf("events auth %q: a peer with a token got %d", mode, resp.StatusCode)
		}
		if resp := call("GET", "/v1/fluree/nameservice/snapshot", "", ""); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("events auth %q: the snapshot without a token: %d, want 401", mode, resp.StatusCode)
		}
		stopServe(t, p)
		if warned := strings.Contains(p.Stderr.String(), "admits watchers without a token"); warned != open {
			t.Fatalf("events auth %q: warned %v at start; stderr %s", mode, warned, p.Stderr)
		}
	}
}

// readEvent reads one event of a stream, within a minute (a loaded
// machine's delay is no failure).
func readEvent(t *testing.T, resp *http.Response) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got := make(chan string, 1)
	go func() {
		r := bufio.NewReader(resp.Body)
		var b strings.Builder
		for {
			line, err := r.ReadString('\n')
			b.WriteString(line)
			if err != nil || line == "\n" {
				got <- b.String()
				return
			}
		}
	}()
	select {
	case s := <-got:
		return s
	case <-ctx.Done():
		t.Fatal("no event within a minute")
		return ""
	}
}
