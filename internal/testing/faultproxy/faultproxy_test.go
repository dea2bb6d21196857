package faultproxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// upstream is a server that counts the requests it saw and answers "ok".
func upstream(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var seen atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

func start(t *testing.T, cfg Config) *Proxy {
	t.Helper()
	p, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

var client = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// send sends one request and returns its status (0 when the connection
// failed) and body.
func send(t *testing.T, method, url string, header http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader("body"))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

var dynamoHeader = http.Header{"X-Amz-Target": {"DynamoDB_20120810.UpdateItem"}}

func TestEachFault(t *testing.T) {
	cases := []struct {
		fault     Fault
		header    http.Header
		status    int
		body      string
		forwarded bool
	}{
		{Pass, nil, 200, "ok", true},
		{ResetBefore, nil, 0, "", false},
		{ResetAfter, nil, 0, "", true},
		{Error500, dynamoHeader, 500, "InternalServerError", false},
		{Error500, nil, 500, "<Code>InternalError</Code>", false},
		{Error500After, dynamoHeader, 500, "InternalServerError", true},
		{Throttle, dynamoHeader, 400, "ProvisionedThroughputExceededException", false},
		{Throttle, nil, 200, "ok", true}, // not DynamoDB: passes
		{SlowDown, nil, 503, "<Code>SlowDown</Code>", false},
		{SlowDown, dynamoHeader, 200, "ok", true},
		{Conflict409, http.Header{"If-Match": {`"e1"`}}, 409, "<Code>ConditionalRequestConflict</Code>", false},
		{Conflict409, nil, 200, "ok", true}, // not conditional: passes
	}
	for _, c := range cases {
		t.Run(c.fault.String(), func(t *testing.T) {
			up, seen := upstream(t)
			rates := map[Fault]float64{}
			if c.fault != Pass {
				rates[c.fault] = 1
			}
			var told atomic.Int64 // requests reported to Forwarded, with their body and the server's 200
			p := start(t, Config{Target: up.URL, Seed: 1, Rates: rates, Forwarded: func(_ *http.Request, body []byte, status int) {
				if string(body) == "body" && status == 200 {
					told.Add(1)
				}
			}})
			status, body := send(t, http.MethodPut, p.URL()+"/b/k", c.header)
			if status != c.status || !strings.Contains(body, c.body) {
				t.Errorf("got %d %q, want %d containing %q", status, body, c.status, c.body)
			}
			if got := seen.Load() == 1; got != c.forwarded {
				t.Errorf("forwarded %v, want %v", got, c.forwarded)
			}
			if got := told.Load() == 1; got != c.forwarded {
				t.Errorf("Forwarded called %d times, want it when forwarded (%v)", told.Load(), c.forwarded)
			}
		})
	}
}

func TestLatencyIsBounded(t *testing.T) {
	up, _ := upstream(t)
	p := start(t, Config{Target: up.URL, Seed: 2, Rates: map[Fault]float64{Latency: 1}, MaxLatency: 30 * time.Millisecond})
	for range 5 {
		begin := time.Now()
		if status, _ := send(t, http.MethodGet, p.URL()+"/", nil); status != 200 {
			t.Fatalf("status %d", status)
		}
		// Far above MaxLatency, so that a loaded machine's delays are not
		// taken for an unbounded one.
		if d := time.Since(begin); d > 10*time.Second {
			t.Fatalf("request took %v with MaxLatency 30ms", d)
		}
	}
	if p.Count(Latency) != 5 {
		t.Errorf("latency count %d, want 5", p.Count(Latency))
	}
}

func TestLimitBoundsFaults(t *testing.T) {
	up, _ := upstream(t)
	p := start(t, Config{Target: up.URL, Seed: 3, Rates: map[Fault]float64{Error500: 1}, Limit: 3})
	var failed int
	for range 10 {
		if status, _ := send(t, http.MethodGet, p.URL()+"/", nil); status == 500 {
			failed++
		}
	}
	if failed != 3 || p.Injected() != 3 || p.Count(Pass) != 7 {
		t.Errorf("%d failed, %d injected (%s); want 3 of 10", failed, p.Injected(), p.Summary())
	}
}

func TestSeedRepeats(t *testing.T) {
	run := func() string {
		up, _ := upstream(t)
		p := start(t, Config{Target: up.URL, Seed: 42, Rates: map[Fault]float64{Error500: 0.3, SlowDown: 0.2}})
		var b strings.Builder
		for range 30 {
			status, _ := send(t, http.MethodGet, p.URL()+"/", nil)
			b.WriteString(http.StatusText(status)[:1])
		}
		return b.String()
	}
	if a, b := run(), run(); a != b {
		t.Errorf("same seed, different faults:\n%s\n%s", a, b)
	}
}

func TestDisabledPasses(t *testing.T) {
	up, seen := upstream(t)
	p := start(t, Config{Target: up.URL, Seed: 4, Rates: map[Fault]float64{ResetBefore: 1}})
	p.SetEnabled(false)
	if status, _ := send(t, http.MethodGet, p.URL()+"/", nil); status != 200 || seen.Load() != 1 {
		t.Fatalf("disabled proxy: status %d, forwarded %d", status, seen.Load())
	}
}

func TestBadConfig(t *testing.T) {
	for _, cfg := range []Config{
		{Target: "127.0.0.1:1"},
		{Target: "http://x", Rates: map[Fault]float64{Error500: 0.7, SlowDown: 0.7}},
		{Target: "http://x", Rates: map[Fault]float64{Pass: 0.1}},
	} {
		if p, err := Start(cfg); err == nil {
			_ = p.Close()
			t.Errorf("Start(%+v) succeeded", cfg)
		}
	}
}

// TestLoseSeesTheWrite: Lose is asked only about writes the server answered
// with success, after the server saw them, and can read what was written;
// the client of a lost answer gets a 500.
func TestLoseSeesTheWrite(t *testing.T) {
	srv, seen := upstream(t)
	var asked []string
	p := start(t, Config{Target: srv.URL, Lose: func(r *http.Request) bool {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			t.Error(err)
		}
		asked = append(asked, r.Method+" "+string(b))
		return r.Method == http.MethodPut
	}})
	if code, _ := send(t, http.MethodGet, p.URL(), nil); code != http.StatusOK {
		t.Errorf("a read got %d, want 200", code)
	}
	if code, _ := send(t, http.MethodPost, p.URL(), nil); code != http.StatusOK {
		t.Errorf("a write kept got %d, want 200", code)
	}
	if code, _ := send(t, http.MethodPut, p.URL(), nil); code != http.StatusInternalServerError {
		t.Errorf("a write lost got %d, want 500", code)
	}
	if want := "POST body,PUT body"; strings.Join(asked, ",") != want {
		t.Errorf("Lose was asked about %q, want %q", asked, want)
	}
	if seen.Load() != 3 {
		t.Errorf("the server saw %d requests, want 3", seen.Load())
	}
}
