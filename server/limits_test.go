package server_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"nameservice.dev/nameservice/server"
	"nameservice.dev/nameservice/server/auth"
)

// serveLimited serves s's handler through HTTPServer(l) on a loopback
// listener of its own and returns its address.
func serveLimited(t *testing.T, s *Server, l server.Limits) string {
	t.Helper()
	hs := s.Srv.HTTPServer(l)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	return ln.Addr().String()
}

// dialFrom connects to addr from the loopback address 127.0.0.<host>, so
// that one test can be several clients.
func dialFrom(t *testing.T, host int, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(host))}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// rootServer serves with authentication: the static token "root" may read
// and write everything.
func rootServer(t *testing.T, opts server.Options) *Server {
	t.Helper()
	a, err := auth.NewAuthenticator(auth.Config{Tokens: []auth.TokenEntry{
		{Name: "root", SHA256: auth.HashToken("root"), Read: []string{""}, Write: []string{""}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	opts.Auth = a
	s := Start(t, opts)
	Must(t, s.NS.Init(context.Background(), "db"))
	return s
}

// everyRoute is one request per route of the server (and one no route
// has), with a body where the route takes one.
var everyRoute = []string{
	"GET /healthz", "GET /readyz", "GET /metrics", "GET /.well-known/fluree.json", "GET /openapi.yaml",
	"GET /ns/v1/records", "GET /ns/v1/records/db:main", "GET /ns/v1/heads/db:main", "PUT /ns/v1/records/new:main", "DELETE /ns/v1/records/other:main",
	"POST /ns/v1/push/head/db:main", "POST /ns/v1/retract/db:main", "POST /ns/v1/graph-sources/gs:main", "GET /ns/v1/watch",
	"POST /v1/fluree/nameservice/refs/db:main/commit", "POST /v1/fluree/nameservice/refs/db:main/index",
	"POST /v1/fluree/nameservice/refs/db:main/init", "GET /v1/fluree/nameservice/snapshot",
	"GET /v1/fluree/storage/ns/db:main", "GET /v1/fluree/events?all=true", "POST /fluree/nameservice/refs/db:main/commit",
	"GET /nowhere",
}

// slowBody sends the headers of route declaring a body (by length, or
// chunked), then trickles the body a byte every 100ms until the server
// closes the connection. It returns how long the server kept it open.
func slowBody(conn net.Conn, route string, token bool, chunked bool, limit time.Duration) (time.Duration, error) {
	method, path, _ := strings.Cut(route, " ")
	var h strings.Builder
	fmt.Fprintf(&h, "%s %s HTTP/1.1\r\nHost: ns\r\nContent-Type: application/json\r\n", method, path)
	if token {
		h.WriteString("Authorization: Bearer root\r\n")
	}
	chunk := "{"
	if chunked {
		h.WriteString("Transfer-Encoding: chunked\r\n")
		chunk = "1\r\n{\r\n"
	} else {
		h.WriteString("Content-Length: 100000\r\n")
	}
	h.WriteString("\r\n" + chunk)
	began := time.Now()
	if _, err := io.WriteString(conn, h.String()); err != nil {
		return 0, err
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := io.WriteString(conn, chunk); err != nil {
					return
				}
			}
		}
	}()
	_ = conn.SetReadDeadline(began.Add(limit))
	_, err := io.Copy(io.Discard, conn)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return time.Since(began), fmt.Errorf("%s: still open after %v", route, limit)
	}
	return time.Since(began), nil
}

// 500 connections trickling their bodies, spread over every route, half
// without a token, are all cut off within the body timeout, and the server
// answers other clients meanwhile. Before, only the handlers that read a
// body had a deadline: a GET /healthz declaring a body stayed open.
func TestSlowBodiesCutOffOnEveryRoute(t *testing.T) {
	const bodyTimeout, conns = 2 * time.Second, 500
	s := rootServer(t, server.Options{BodyTimeout: bodyTimeout})
	addr := serveLimited(t, s, server.Limits{})
	// Far past the body timeout: a loaded machine is late by seconds, a
	// connection without a deadline stays open for good.
	limit := 15 * bodyTimeout
	var wg sync.WaitGroup
	held := make([]time.Duration, conns)
	errs := make(chan error, conns)
	for i := range conns {
		// Five client addresses, 100 connections each: within the default
		// cap per address.
		conn := dialFrom(t, 2+i%5, addr)
		defer conn.Close()
		wg.Go(func() {
			d, err := slowBody(conn, everyRoute[i%len(everyRoute)], i%2 == 0, i%3 == 0, limit)
			held[i] = d
			if err != nil {
				errs <- err
			}
		})
	}
	// Meanwhile the server answers.
	time.Sleep(bodyTimeout / 2)
	c := &http.Client{Timeout: 5 * time.Second}
	for _, path := range []string{"/healthz", "/ns/v1/records/db:main"} {
		req, _ := http.NewRequest("GET", "http://"+addr+path, nil)
		req.Header.Set("Authorization", "Bearer root")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s while 500 slow bodies were open: %v", path, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s while 500 slow bodies were open: %d", path, resp.StatusCode)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var longest time.Duration
	for _, d := range held {
		longest = max(longest, d)
	}
	t.Logf("%d slow bodies on %d routes: the longest was held %v (body timeout %v)", conns, len(everyRoute), longest, bodyTimeout)
}

// probe sends a request for /healthz on conn and reports whether the
// server answered it (false: it closed the connection unanswered).
func probe(t *testing.T, conn net.Conn) bool {
	t.Helper()
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: ns\r\n\r\n"); err != nil {
		return false
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatal("the server neither answered nor closed the connection")
	}
	return strings.HasPrefix(line, "HTTP/1.1 200 ")
}

// metricValue returns the value of one series in /metrics ("" if absent).
func metricValue(t *testing.T, s *Server, series string) string {
	t.Helper()
	_, b := s.Call(t, "GET", "/metrics", "")
	for line := range strings.Lines(b) {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// A client address may hold MaxConnsPerAddr connections, all clients
// MaxConns; connections beyond either are closed on arrival, and the
// others are still served.
func TestConnectionCaps(t *testing.T) {
	s := Start(t, server.Options{})
	addr := serveLimited(t, s, server.Limits{MaxConns: 12, MaxConnsPerAddr: 4})
	var idle []net.Conn
	for host := 2; host <= 4; host++ {
		for range 4 {
			idle = append(idle, dialFrom(t, host, addr))
		}
	}
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	waitFor(t, func() bool { return metricValue(t, s, "nameservice_connections_open") == "12" })
	if probe(t, dialFrom(t, 5, addr)) {
		t.Fatal("a 13th connection was served beyond MaxConns 12")
	}
	idle[11].Close() // one of 127.0.0.4's
	waitFor(t, func() bool { return metricValue(t, s, "nameservice_connections_open") == "11" })
	if probe(t, dialFrom(t, 2, addr)) {
		t.Fatal("a 5th connection from one address was served beyond MaxConnsPerAddr 4")
	}
	if !probe(t, dialFrom(t, 5, addr)) {
		t.Fatal("another address was refused below both caps")
	}
	for _, reason := range []string{"max_conns", "max_conns_per_addr"} {
		if v := metricValue(t, s, `nameservice_connections_refused_total{reason="`+reason+`"}`); v != "1" {
			t.Errorf("refused for %s: %q, want 1", reason, v)
		}
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within a minute")
		}
	}
}

// A client that does not take its answer is cut off after WriteTimeout;
// an event stream is not.
func TestWriteTimeout(t *testing.T) {
	// 2 s, not less: the test reads /metrics through the same server, and a
	// loaded machine took over 500 ms to write its answer.
	const writeTimeout = 2 * time.Second
	s := Start(t, server.Options{WriteTimeout: writeTimeout, KeepAlive: 100 * time.Millisecond})
	ctx := context.Background()
	for i := range 300 {
		Must(t, s.NS.Init(ctx, fmt.Sprintf("a-rather-long-ledger-name-to-make-the-answer-big-%04d", i)))
	}
	addr := serveLimited(t, s, server.Limits{})
	// Many requests for the 300-record snapshot, pipelined, never read: the
	// answers fill the socket buffers and the server's write blocks.
	conn := dialFrom(t, 1, addr)
	defer conn.Close()
	req := strings.Repeat("GET /v1/fluree/nameservice/snapshot HTTP/1.1\r\nHost: ns\r\n\r\n", 400)
	go func() { _, _ = io.WriteString(conn, req) }()
	waitFor(t, func() bool {
		return metricValue(t, s, `nameservice_http_requests_total{code="200",method="GET",route="GET /v1/fluree/nameservice/snapshot"}`) != ""
	})
	time.Sleep(2 * writeTimeout)
	// The server gave up on the connection: reading now drains what it had
	// sent and ends, instead of getting answers to all 400 requests.
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := io.Copy(io.Discard, conn)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatal("the connection of a client that stopped reading was not cut off")
	}
	if full := 400 * 300 * 100; n >= int64(full) {
		t.Fatalf("read %d bytes: every answer was sent", n)
	}
	// A stream outlives WriteTimeout.
	ev := s.Stream(t, "/ns/v1/watch?prefix=none/")
	time.Sleep(writeTimeout + 500*time.Millisecond)
	if e := ev.Next(t); !strings.HasPrefix(e, "event: synced") {
		t.Fatalf("stream: %q", e)
	}
	if e := ev.Next(t); e != ":\n\n" {
		t.Fatalf("stream after WriteTimeout: %q, want a keep-alive", e)
	}
}
