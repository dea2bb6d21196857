package server_test

// The tests' server: the HTTP server over a driver on a loopback listener,
// for the tests of every route family (the server's own, Fluree's wire and
// the console), and the readers of its answers and event streams.

import (
	"bufio"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/mem"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/server"
	"nameservice.dev/nameservice/server/auth"
)

// FixedNow is the clock of the servers under test, for emitted_at.
var FixedNow = time.Date(2026, 11, 23, 4, 5, 6, 789_000_000, time.UTC)

// Server is a server under test.
type Server struct {
	*httptest.Server
	NS    *nameservice.NameService
	Srv   *server.Server
	Token string // sent as a bearer token when set
}

// Start runs a server over a fresh memory store on a loopback listener.
func Start(t *testing.T, opts server.Options) *Server {
	t.Helper()
	return StartOn(t, mem.NewStore().Open(), opts)
}

// StartOn runs a server over d on a loopback listener: without
// authentication unless opts.Auth is set, with FixedNow as its clock and
// a 20ms poll unless opts say otherwise.
func StartOn(t testing.TB, d driver.Driver, opts server.Options) *Server {
	t.Helper()
	ns := nameservice.New(d, nameservice.WithClock(func() time.Time { return time.Unix(1_700_000_000, 0) }))
	if opts.Auth == nil {
		opts.NoAuth = true
	}
	if opts.Now == nil {
		opts.Now = func() time.Time { return FixedNow }
	}
	opts.PollInterval = cmp.Or(opts.PollInterval, 20*time.Millisecond)
	srv := server.New(ns, opts)
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { _ = srv.Close(); hs.Close(); _ = ns.Close() })
	return &Server{Server: hs, NS: ns, Srv: srv}
}

// Call sends a request and returns the status and the body.
func (s *Server) Call(t *testing.T, method, path, body string, header ...string) (int, string) {
	t.Helper()
	resp := s.Do(t, method, path, body, header...)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	Must(t, err)
	return resp.StatusCode, string(b)
}

// Do sends a request (a JSON body when body is not "", the token, and the
// header pairs: an empty value removes the header) and returns the answer.
func (s *Server) Do(t testing.TB, method, path, body string, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, s.URL+path, strings.NewReader(body)) // "": no body
	Must(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if s.Token != "" {
		req.Header.Set("Authorization", "Bearer "+s.Token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] == "" {
			req.Header.Del(header[i])
		} else {
			req.Header.Set(header[i], header[i+1])
		}
	}
	resp, err := http.DefaultClient.Do(req)
	Must(t, err)
	return resp
}

// Get returns the body of a GET of path, failing unless it answers 200.
func (s *Server) Get(t *testing.T, path string) string {
	t.Helper()
	st, b := s.Call(t, "GET", path, "")
	if st != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, st, b)
	}
	return b
}

// Want fails unless a call answered status and exactly body.
func Want(t *testing.T, what string, gotStatus int, gotBody string, status int, body string) {
	t.Helper()
	if gotStatus != status || gotBody != body {
		t.Fatalf("%s:\n got %d %s\nwant %d %s", what, gotStatus, gotBody, status, body)
	}
}

// SSE reads raw events (their lines, joined) from an event stream.
type SSE struct {
	Resp *http.Response
	r    *bufio.Reader
}

// Stream opens the event stream at path, failing unless it answers 200.
func (s *Server) Stream(t testing.TB, path string) *SSE {
	t.Helper()
	resp := s.Do(t, http.MethodGet, path, "")
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("stream %s: %d %s", path, resp.StatusCode, b)
	}
	return NewSSE(resp)
}

// NewSSE reads the event stream of resp.
func NewSSE(resp *http.Response) *SSE { return &SSE{Resp: resp, r: bufio.NewReader(resp.Body)} }

// Next returns the next event's raw text, comments included, up to and
// including its blank line, within a time limit.
func (s *SSE) Next(t testing.TB) string {
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
			if err != nil || line == "\n" {
				ch <- res{b.String(), err}
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

// ConfigHash is the digest of a graph source's config text that Fluree's
// event IDs carry.
func ConfigHash(config string) string {
	sum := sha256.Sum256([]byte(config))
	return hex.EncodeToString(sum[:4])
}

// NonMinimalCID is a content ID whose version varint takes two bytes
// (0x81 0x00), which Fluree's varint decoder refuses.
func NonMinimalCID() string {
	sum := sha256.Sum256([]byte("x"))
	b := append([]byte{0x81, 0x00, 0x71, 0x12, 0x20}, sum[:]...)
	return "b" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
}

// LongDigestCID is a content ID with a 65-byte digest, over Fluree's 64.
func LongDigestCID() string {
	b := append([]byte{0x01, 0x71, 0x13, 65}, make([]byte, 65)...)
	return "b" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
}

// Must fails the test on err.
var Must = testenv.Must

// AuthServer serves with two static tokens (tenant "t1/" read-write, and a
// reader of everything) and one trusted Issuer.
func AuthServer(t *testing.T, trusted Issuer) *Server {
	t.Helper()
	a, err := auth.NewAuthenticator(auth.Config{
		Tokens: []auth.TokenEntry{
			{Name: "t1-writer", SHA256: auth.HashToken("secret-t1"), Read: []string{"t1/"}, Write: []string{"t1/"}},
			{Name: "reader", SHA256: auth.HashToken("secret-reader"), Read: []string{""}},
		},
		TrustedIssuers: []string{trusted.DID},
	})
	Must(t, err)
	s := Start(t, server.Options{Auth: a, MaxBodyBytes: 4096})
	ctx := context.Background()
	Must(t, s.NS.Init(ctx, "t1/db"))
	Must(t, s.NS.Init(ctx, "t2/db"))
	Must(t, s.NS.PublishGraphSource(ctx, "t1/search", "db:Bm25Index", nil, nil))
	return s
}
