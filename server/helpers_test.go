package server_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/mem"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/server"
)

// fixedNow is the clock of the servers under test, for emitted_at.
var fixedNow = time.Date(2026, 11, 23, 4, 5, 6, 789_000_000, time.UTC)

type testServer struct {
	*httptest.Server
	ns    *nameservice.NameService
	srv   *server.Server
	token string
}

// start runs a server over a fresh memory store on a loopback listener.
func start(t *testing.T, opts server.Options) *testServer {
	t.Helper()
	return startOn(t, mem.NewStore().Open(), opts)
}

// startOn runs a server over d on a loopback listener.
func startOn(t testing.TB, d driver.Driver, opts server.Options) *testServer {
	t.Helper()
	ns := nameservice.New(d, nameservice.WithClock(func() time.Time { return time.Unix(1_700_000_000, 0) }))
	if opts.Auth == nil {
		opts.NoAuth = true
	}
	if opts.Now == nil {
		opts.Now = func() time.Time { return fixedNow }
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = 20 * time.Millisecond
	}
	srv := server.New(ns, opts)
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { _ = srv.Close(); hs.Close(); _ = ns.Close() })
	return &testServer{Server: hs, ns: ns, srv: srv}
}

// call sends a request and returns the status and the body.
func (s *testServer) call(t *testing.T, method, path, body string, header ...string) (int, string) {
	t.Helper()
	resp := s.do(t, method, path, body, header...)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func (s *testServer) do(t *testing.T, method, path, body string, header ...string) *http.Response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] == "" {
			req.Header.Del(header[i])
		} else {
			req.Header.Set(header[i], header[i+1])
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// want fails unless a call answered status and exactly body.
func want(t *testing.T, what string, gotStatus int, gotBody string, status int, body string) {
	t.Helper()
	if gotStatus != status || gotBody != body {
		t.Fatalf("%s:\n got %d %s\nwant %d %s", what, gotStatus, gotBody, status, body)
	}
}

// cid returns a valid CIDv1 (dag-cbor, sha2-256) in base32 lower case,
// derived from seed.
func cid(seed string) string { return testenv.CID(seed) }

// sseStream reads raw events (their lines, joined) from an event stream.
type sseStream struct {
	resp *http.Response
	r    *bufio.Reader
}

func (s *testServer) stream(t testing.TB, path string) *sseStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+path, nil)
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("stream %s: %d %s", path, resp.StatusCode, b)
	}
	return &sseStream{resp: resp, r: bufio.NewReader(resp.Body)}
}

// next returns the next event's raw text, comments included, up to and
// including its blank line, within a time limit.
func (s *sseStream) next(t testing.TB) string {
	t.Helper()
	type res struct {
		s   string
		err error
	}
	ch := make(chan res, 1)
	go func() {
		var b strings.Builder
		for {
			line, err := s.r.ReadString('\n')
			b.WriteString(line)
			if err != nil {
				ch <- res{b.String(), err}
				return
			}
			if line == "\n" {
				ch <- res{b.String(), nil}
				return
			}
		}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("stream ended: %v after %q", r.err, r.s)
		}
		return r.s
	case <-time.After(time.Minute): // a loaded machine's delay is no failure
		t.Fatal("no event within a minute")
		return ""
	}
}

func configHash(config string) string {
	sum := sha256.Sum256([]byte(config))
	return hex.EncodeToString(sum[:4])
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// nonMinimalCID is a content ID whose version varint takes two bytes
// (0x81 0x00), which Fluree's varint decoder refuses.
func nonMinimalCID() string {
	sum := sha256.Sum256([]byte("x"))
	b := append([]byte{0x81, 0x00, 0x71, 0x12, 0x20}, sum[:]...)
	return "b" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
}

// longDigestCID is a content ID with a 65-byte digest, over Fluree's 64.
func longDigestCID() string {
	b := append([]byte{0x01, 0x71, 0x13, 65}, make([]byte, 65)...)
	return "b" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
}
