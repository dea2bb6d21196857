// Package faultproxy is a fault-injecting HTTP reverse proxy for tests: put
// it between a driver and a server on loopback, and a seeded share of the
// requests is delayed, refused, answered with an error or cut off, before
// or after the server saw it. The proxy starts enabled; SetEnabled(false)
// passes every request through (to set up data without faults).
package faultproxy

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"nameservice.dev/nameservice/internal/driverutil"
)

// Fault is what the proxy does to one request.
type Fault int

// The faults. One that does not apply to a request (Throttle to S3) lets it pass.
const (
	// Pass forwards the request and returns the server's answer.
	Pass Fault = iota
	// Latency delays the request by up to MaxLatency, then treats it as
	// usual; it combines with any other fault.
	Latency
	// ResetBefore resets the connection without forwarding the request.
	ResetBefore
	// ResetAfter forwards the request, then resets the connection instead
	// of answering: the client cannot tell whether it landed.
	ResetAfter
	// Error500 answers 500 without forwarding.
	Error500
	// Error500After forwards, then answers 500 instead of the server's answer.
	Error500After
	// Throttle answers a DynamoDB request (one with X-Amz-Target) with 400
	// ProvisionedThroughputExceededException, without forwarding.
	Throttle
	// SlowDown answers an S3 request with 503 SlowDown, without forwarding.
	SlowDown
	// Conflict409 answers a conditional S3 PUT (If-Match or If-None-Match)
	// with 409 ConditionalRequestConflict, without forwarding.
	Conflict409
	numFaults
)

// Faults lists every fault but Pass, in order.
var Faults = []Fault{Latency, ResetBefore, ResetAfter, Error500, Error500After, Throttle, SlowDown, Conflict409}

var faultNames = [numFaults]string{"pass", "latency", "reset before", "reset after", "500", "500 after",
	"throttle", "slowdown", "409 conflict"}

// String names the fault.
func (f Fault) String() string {
	if f >= 0 && f < numFaults {
		return faultNames[f]
	}
	return fmt.Sprintf("fault(%d)", int(f))
}

// Defaults of Config, and timeout, which bounds each forwarded request.
const (
	DefaultLimit      = 10000
	DefaultMaxLatency = 20 * time.Millisecond
	timeout           = 10 * time.Second
)

// Config says where the proxy forwards and which faults it injects.
type Config struct {
	// Target is the server's base URL, e.g. http://127.0.0.1:8000.
	Target string
	// Seed seeds the choice of faults.
	Seed uint64
	// Rates is the probability of each fault per request. Latency is drawn
	// on its own; the others share one draw, so their sum must be at most 1.
	Rates map[Fault]float64
	// MaxLatency bounds a Latency delay (0: DefaultMaxLatency).
	MaxLatency time.Duration
	// Limit bounds the faults injected in all, Latency included
	// (0: DefaultLimit); afterwards every request passes.
	Limit int
	// Forwarded, when set, is called with every request the server
	// answered, its body and the server's status code, whatever the client
	// is then told.
	Forwarded func(r *http.Request, body []byte, status int)
	// Lose, when set, is called after the server answered a write (see
	// IsWrite) with success: when it returns true, the client gets a 500
	// instead. It runs in the request's goroutine, so the client waits while
	// other requests go through. r.Body holds the request's body again.
	Lose func(r *http.Request) bool
}

// Proxy is a running fault-injecting proxy.
type Proxy struct {
	cfg     Config
	srv     *http.Server
	ln      net.Listener
	client  *http.Client
	enabled atomic.Bool
	mu      sync.Mutex // guards rnd and left
	rnd     *rand.Rand
	left    int
	counts  [numFaults]atomic.Int64
}

// Start listens on a loopback port and serves until Close.
func Start(cfg Config) (*Proxy, error) {
	if !strings.HasPrefix(cfg.Target, "http://") && !strings.HasPrefix(cfg.Target, "https://") {
		return nil, fmt.Errorf("faultproxy: target %q is not an http(s) URL", cfg.Target)
	}
	sum := 0.0
	for f, r := range cfg.Rates {
		if f <= Pass || f >= numFaults || r < 0 || r > 1 {
			return nil, fmt.Errorf("faultproxy: bad rate %v for %s", r, f)
		}
		if f != Latency {
			sum += r
		}
	}
	if sum > 1 {
		return nil, errors.New("faultproxy: the rates of the faults other than latency add up to more than 1")
	}
	cfg.MaxLatency = driverutil.Positive(cfg.MaxLatency, DefaultMaxLatency)
	cfg.Limit = driverutil.Positive(cfg.Limit, DefaultLimit)
	cfg.Target = strings.TrimRight(cfg.Target, "/")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faultproxy: %w", err)
	}
	p := &Proxy{
		cfg:    cfg,
		ln:     ln,
		client: &http.Client{Timeout: timeout, Transport: http.DefaultTransport.(*http.Transport).Clone()},
		rnd:    rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		left:   cfg.Limit,
	}
	p.enabled.Store(true)
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: timeout}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// URL returns the proxy's base URL, to use as the client's endpoint.
func (p *Proxy) URL() string { return "http://" + p.ln.Addr().String() }

// SetEnabled turns fault injection on or off; off, every request passes.
func (p *Proxy) SetEnabled(on bool) { p.enabled.Store(on) }

// Count returns how many requests got fault f (Pass: passed untouched).
func (p *Proxy) Count(f Fault) int64 { return p.counts[f].Load() }

// Injected returns how many faults were injected in all, Latency included.
func (p *Proxy) Injected() int64 {
	var n int64
	for _, f := range Faults {
		n += p.Count(f)
	}
	return n
}

// Summary describes the counts, e.g. "pass 120, latency 8, reset after 3".
func (p *Proxy) Summary() string {
	parts := []string{fmt.Sprintf("pass %d", p.Count(Pass))}
	for _, f := range Faults {
		if n := p.Count(f); n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", f, n))
		}
	}
	return strings.Join(parts, ", ")
}

// Close stops the proxy and cuts every connection.
func (p *Proxy) Close() error {
	err := p.srv.Close()
	p.client.CloseIdleConnections()
	return err
}
