package server

import (
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/internal/nswire"
	"nameservice.dev/nameservice/model"
	"nameservice.dev/nameservice/server/fluree"
	"nameservice.dev/nameservice/server/internal/web"
)

// Defaults of Limits.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
	DefaultMaxHeaderBytes    = 64 << 10
	DefaultMaxConns          = 1024
	DefaultMaxConnsPerAddr   = 128
)

// Limits are the connection limits of the http.Server HTTPServer returns.
type Limits struct {
	// ReadHeaderTimeout bounds the read of the headers (default 10s).
	ReadHeaderTimeout time.Duration
	// IdleTimeout closes a keep-alive connection idle this long (default 2m).
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds the request headers (default 64 KiB).
	MaxHeaderBytes int
	// MaxConns bounds the connections open at once (default 1024); one
	// beyond it is closed as soon as it is accepted.
	MaxConns int
	// MaxConnsPerAddr bounds those of one client address (an IPv4 address,
	// or an IPv6 /64), default 128. Behind a proxy, set it to MaxConns.
	MaxConnsPerAddr int
}

// HTTPServer returns an http.Server serving s with the given limits, whose
// Shutdown also ends s's event streams. Requests are bounded by s's Options;
// the connection has no read or write timeout, which would cut streams.
func (s *Server) HTTPServer(l Limits) *http.Server {
	l.ReadHeaderTimeout = driverutil.Positive(l.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	l.IdleTimeout = driverutil.Positive(l.IdleTimeout, DefaultIdleTimeout)
	l.MaxHeaderBytes = driverutil.Positive(l.MaxHeaderBytes, DefaultMaxHeaderBytes)
	perAddr := driverutil.Positive(l.MaxConnsPerAddr, DefaultMaxConnsPerAddr)
	cl := &connLimiter{max: driverutil.Positive(l.MaxConns, DefaultMaxConns), open: map[net.Conn]netip.Prefix{}, m: s.metrics,
		perAddr: &quota[netip.Prefix]{max: perAddr, held: map[netip.Prefix]int{}}}
	hs := &http.Server{
		Handler: s, ReadHeaderTimeout: l.ReadHeaderTimeout, IdleTimeout: l.IdleTimeout, MaxHeaderBytes: l.MaxHeaderBytes,
		ConnState: cl.state,
		ErrorLog:  slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	hs.RegisterOnShutdown(func() { _ = s.Close() })
	return hs
}

// bound sets the deadlines of one request and bounds its body. The body
// must arrive within BodyTimeout even if no handler reads it (the server
// discards it before it answers); the answer must be taken within
// WriteTimeout (but a stream's, see subscribe). A GET or HEAD with a body
// is answered 400, and bound returns false.
func (s *Server) bound(w http.ResponseWriter, r *http.Request) bool {
	rc := http.NewResponseController(w)
	now := time.Now()
	// Not every ResponseWriter has deadlines (a test recorder).
	_ = rc.SetWriteDeadline(now.Add(s.opts.WriteTimeout))
	if r.ContentLength != 0 {
		// The http.Server sets it again for the connection's next request.
		_ = rc.SetReadDeadline(now.Add(s.opts.BodyTimeout))
		r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes)
	if r.ContentLength != 0 && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		msg := r.Method + " requests carry no body"
		if _, isFluree := fluree.Rest(r.URL.Path); isFluree {
			fluree.WriteError(w, http.StatusBadRequest, msg)
		} else {
			web.WriteRaw(w, http.StatusBadRequest, web.Marshal(nswire.Error{Error: msg, Code: model.InvalidArgument.String()}))
		}
		return false
	}
	return true
}

// deadlineBody lifts the read deadline once the body is read whole, so
// that it does not cut off the rest of the request.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// connLimiter closes a connection beyond the global cap or its address's
// as soon as it is accepted (ConnState runs before a TLS handshake), so
// that no client can take every file descriptor.
type connLimiter struct {
	max     int
	perAddr *quota[netip.Prefix]
	m       *metrics

	mu   sync.Mutex
	open map[net.Conn]netip.Prefix
}

func (l *connLimiter) state(c net.Conn, st http.ConnState) {
	switch st {
	case http.StateNew:
		if reason := l.admit(c); reason != "" {
			l.m.connsRefused.WithLabelValues(reason).Inc()
			_ = c.Close()
		}
	case http.StateClosed, http.StateHijacked:
		l.release(c)
	}
}

// admit counts c in, or returns why it may not be.
func (l *connLimiter) admit(c net.Conn) string {
	addr := clientPrefix(c.RemoteAddr().String())
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case len(l.open) >= l.max:
		return "max_conns"
	case !l.perAddr.acquire(addr):
		return "max_conns_per_addr"
	}
	l.open[c] = addr
	l.m.connsOpen.Set(float64(len(l.open)))
	return ""
}

func (l *connLimiter) release(c net.Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	addr, ok := l.open[c]
	if !ok {
		return // refused, or already released (hijacked, then closed)
	}
	delete(l.open, c)
	l.perAddr.release(addr)
	l.m.connsOpen.Set(float64(len(l.open)))
}

// clientPrefix returns the address a client at hostport counts against: its
// IPv4 address, or its IPv6 /64 (one host usually holds a whole /64); one
// shared address for what does not parse.
func clientPrefix(hostport string) netip.Prefix {
	ap, err := netip.ParseAddrPort(hostport)
	if err != nil {
		return netip.Prefix{}
	}
	ip := ap.Addr().Unmap()
	bits := 32
	if ip.Is6() {
		bits = 64
	}
	p, _ := ip.Prefix(bits)
	return p
}

// aeadSuites are the TLS 1.2 suites a server offers: ECDHE (forward
// secrecy) with an AEAD cipher. TLS 1.3's are all AEAD.
var aeadSuites = []uint16{
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
}

// TLSConfig returns the TLS configuration of a server with the given
// certificates: TLS 1.2 or later, and in TLS 1.2 only ECDHE suites with an
// AEAD cipher (no CBC, no SHA-1 MAC, no RSA key exchange).
func TLSConfig(certs ...tls.Certificate) *tls.Config {
	return &tls.Config{Certificates: certs, MinVersion: tls.VersionTLS12, CipherSuites: aeadSuites}
}
