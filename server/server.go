// Package server is the nameservice's HTTP service: a stateless handler in
// front of any backend. It serves the driver contract under /ns/v1 (the
// wire of the http:// driver), runs the event hub every stream shares,
// bounds, counts and logs requests, and mounts Fluree's protocol (package
// server/fluree) and the console (package server/console, under /ui).
//
// Every piece of state lives in the backend, so several servers over one
// table or bucket behave as one service; a server only keeps a short cache
// of write outcomes by idempotency key (see docs/serve.md). Package
// server/auth says who a request acts for, once per request.
package server

import (
	"cmp"
	"container/list"
	"context"
	_ "embed"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/felixge/httpsnoop"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/internal/nswire"
	"nameservice.dev/nameservice/model"
	"nameservice.dev/nameservice/server/auth"
	"nameservice.dev/nameservice/server/console"
	"nameservice.dev/nameservice/server/fluree"
	"nameservice.dev/nameservice/server/internal/web"
)

// Defaults of Options.
const (
	DefaultMaxBodyBytes = 1 << 20
	DefaultMaxStreams   = 256
	DefaultKeepAlive    = 30 * time.Second
	DefaultPollInterval = time.Second
	DefaultOpTimeout    = 30 * time.Second
	DefaultBodyTimeout  = 30 * time.Second
	DefaultWriteTimeout = 2 * time.Minute
)

// Options configure a Server. The zero value refuses every request that
// needs a principal: set Auth, or NoAuth to serve without authentication.
type Options struct {
	// Auth verifies bearer tokens; nil (without NoAuth) refuses every
	// authenticated route with 401.
	Auth *auth.Authenticator
	// NoAuth serves every route to anyone with full rights.
	NoAuth bool
	// EventsAuth is how Fluree's events route authenticates (default
	// auth.EventsAuthRequired); with NoAuth it is open anyway.
	EventsAuth auth.EventsAuth
	// Logger receives one line per request (never a token); nil discards.
	Logger *slog.Logger
	// Registry receives the metrics served at /metrics; nil: a private one.
	Registry *prometheus.Registry
	// MaxBodyBytes bounds a request body (413 beyond it).
	MaxBodyBytes int64
	// MaxStreams bounds the event streams open at once (503 beyond it).
	MaxStreams int
	// MaxStreamsPerPrincipal bounds the event streams of one principal, or
	// for anonymous streams one client address (429 beyond it), default 64.
	MaxStreamsPerPrincipal int
	// KeepAlive is the interval of the keep-alive comments of event streams.
	KeepAlive time.Duration
	// PollInterval is how often a watch polls a backend without a change
	// feed.
	PollInterval time.Duration
	// OpTimeout bounds one backend operation. A write is not canceled when
	// its client goes away: its outcome is kept for a resend.
	OpTimeout time.Duration
	// BodyTimeout bounds the read of a request body (default 30s), so that
	// a client trickling its body is cut off.
	BodyTimeout time.Duration
	// WriteTimeout bounds a request but an event stream, to the end of its
	// answer (default 2m), so that a client not taking it is cut off.
	WriteTimeout time.Duration
	// IdempotencyCacheBytes bounds the memory of the outcome cache of
	// resent writes, keys and answers counted (default 64 MiB).
	IdempotencyCacheBytes int64
	// Now is the clock of Fluree's emitted_at; nil: time.Now.
	Now func() time.Time
	// PageTokenKey seals the page tokens of GET /ns/v1/records. Servers
	// behind one load balancer must share it (made from one secret), or a
	// page may reach a server that refuses its token. Nil: a random key of
	// this server's own, good until it restarts.
	PageTokenKey *PageTokenKey
}

// Server is the HTTP handler. Close it (or call Shutdown through
// http.Server.RegisterOnShutdown) to end its event streams.
type Server struct {
	// ns is the one way to the backend, so that every rule of the model
	// holds for the routes as for the Go API.
	ns           *nameservice.NameService
	opts         Options
	log          *slog.Logger
	mux          *http.ServeMux
	metrics      *metrics
	public       *web.Public // every error a client is told passes it
	lister       *lister
	idem         *idemCache
	streams      chan struct{}
	perPrincipal *quota[string] // the streams of each principal, within streams
	hub          *hub
	ctx          context.Context // ends when the server closes
	close        context.CancelFunc
}

// New returns a server over ns.
func New(ns *nameservice.NameService, opts Options) *Server {
	opts.MaxBodyBytes = driverutil.Positive(opts.MaxBodyBytes, DefaultMaxBodyBytes)
	opts.MaxStreams = driverutil.Positive(opts.MaxStreams, DefaultMaxStreams)
	opts.MaxStreamsPerPrincipal = driverutil.Positive(opts.MaxStreamsPerPrincipal, DefaultMaxStreamsPerPrincipal)
	opts.KeepAlive = driverutil.Positive(opts.KeepAlive, DefaultKeepAlive)
	opts.PollInterval = driverutil.Positive(opts.PollInterval, DefaultPollInterval)
	opts.OpTimeout = driverutil.Positive(opts.OpTimeout, DefaultOpTimeout)
	if opts.Now == nil {
		opts.Now = time.Now
	}
	opts.PageTokenKey = cmp.Or(opts.PageTokenKey, randomPageTokenKey())
	opts.BodyTimeout = driverutil.Positive(opts.BodyTimeout, DefaultBodyTimeout)
	opts.WriteTimeout = driverutil.Positive(opts.WriteTimeout, DefaultWriteTimeout)
	opts.IdempotencyCacheBytes = driverutil.Positive(opts.IdempotencyCacheBytes, DefaultIdempotencyCacheBytes)
	log := cmp.Or(opts.Logger, slog.New(slog.DiscardHandler))
	reg := cmp.Or(opts.Registry, prometheus.NewRegistry())
	m := newMetrics(reg)
	s := &Server{
		ns: ns, opts: opts, log: log, mux: http.NewServeMux(), metrics: m,
		idem: &idemCache{maxBytes: opts.IdempotencyCacheBytes, size: m.idemBytes,
			m: map[string]*list.Element{}, order: list.New()},
		streams:      make(chan struct{}, opts.MaxStreams),
		perPrincipal: &quota[string]{max: opts.MaxStreamsPerPrincipal, held: map[string]int{}},
	}
	s.ctx, s.close = context.WithCancel(context.Background())
	s.public = &web.Public{Log: log, Unknown: m.unknown}
	s.lister = &lister{ns: ns, key: opts.PageTokenKey}
	s.hub = &hub{s: s, ups: map[watchKey]*upstream{}}
	s.routes(reg)
	return s
}

// Close ends every open event stream; other requests go on.
func (s *Server) Close() error {
	s.close()
	return nil
}

func (s *Server) routes(reg *prometheus.Registry) {
	m := s.mux
	m.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	m.HandleFunc("GET /readyz", s.ready)
	m.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	m.HandleFunc("GET /openapi.yaml", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		_, _ = w.Write(openAPI)
	})

	p := nswire.Prefix
	m.HandleFunc("GET "+p+"/records", s.auth(s.list))
	m.HandleFunc("GET "+p+"/records/{id...}", s.auth(s.lookup))
	m.HandleFunc("GET "+p+"/heads/{id...}", s.auth(s.heads))
	m.HandleFunc("PUT "+p+"/records/{id...}", s.auth(s.create))
	m.HandleFunc("DELETE "+p+"/records/{id...}", s.auth(s.purge))
	m.HandleFunc("POST "+p+"/push/{concern}/{id...}", s.auth(s.push))
	m.HandleFunc("POST "+p+"/retract/{id...}", s.auth(s.retract))
	m.HandleFunc("POST "+p+"/graph-sources/{id...}", s.auth(s.publishGraphSource))
	m.HandleFunc("GET "+p+"/watch", s.auth(s.watch))
	m.HandleFunc("POST "+p+"/collect", s.auth(s.collect))
	m.HandleFunc("POST "+p+"/branches/{id...}", s.auth(s.createBranch))
	m.HandleFunc("DELETE "+p+"/branches/{id...}", s.auth(s.dropBranch))
	m.HandleFunc("POST "+p+"/reset-head/{id...}", s.auth(s.resetHead))

	env := web.Env{NS: s.ns, Public: s.public, Lister: s.lister, Auth: s.auth, Log: s.log,
		Subscribe: func(w http.ResponseWriter, r *http.Request, id string) *web.Stream {
			return s.subscribe(w, r, watchKey{id: id})
		}}
	fluree.New(fluree.Config{Env: env, TokenAuth: !s.opts.NoAuth, Registry: reg,
		Conflicts: s.metrics.conflicts, Now: s.opts.Now, OpTimeout: s.opts.OpTimeout,
	}).Mount(m)
	console.New(console.Config{Env: env, Authenticator: s.opts.Auth, NoAuth: s.opts.NoAuth,
		AuthFailures: s.metrics.authFailures}).Mount(m)
}

// ServeHTTP bounds the request (see bound), routes it, counts and logs it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	pattern := routeLabel(s.mux, r)
	var principal string
	r = r.WithContext(context.WithValue(r.Context(), principalLogKey{}, &principal))
	// The wrapper keeps w's Flush (event streams) and unwraps to it.
	m := httpsnoop.CaptureMetricsFn(w, func(w http.ResponseWriter) {
		if s.bound(w, r) {
			s.mux.ServeHTTP(w, r)
		}
	})
	method := methodLabel(r.Method)
	s.metrics.observe(pattern, method, m.Code, m.Duration)
	s.log.LogAttrs(r.Context(), slog.LevelInfo, "request",
		slog.String("method", method), slog.String("route", pattern),
		slog.Int("status", m.Code), slog.Duration("duration", m.Duration),
		slog.String("principal", principal), slog.String("remote", r.RemoteAddr))
}

// methodLabel returns m for metrics and logs when it is a method the server
// knows, else "other": a client must not be able to mint label values.
func methodLabel(m string) string {
	if slices.Contains([]string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
		http.MethodDelete, http.MethodPatch, http.MethodOptions}, m) {
		return m
	}
	return "other"
}

// routeLabel names the route of r for metrics and logs: the mux pattern,
// or fluree.RouteLabel's; from a fixed set, so that requests cannot grow
// the number of series.
func routeLabel(mux *http.ServeMux, r *http.Request) string {
	_, pattern := mux.Handler(r)
	switch {
	case pattern == "":
		return "unmatched"
	case !fluree.CatchAll(pattern):
		return pattern
	}
	return fluree.RouteLabel(methodLabel(r.Method), r.URL.Path)
}

func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	if err := s.ns.Ping(ctx); err != nil {
		s.log.Warn("readiness probe failed", slog.String("error", err.Error()))
		http.Error(w, "backend unreachable\n", http.StatusServiceUnavailable)
		return
	}
	_, _ = io.WriteString(w, "ok\n")
}

// errorBody returns the status and body of err on the /ns/v1 routes.
func errorBody(err error) (int, []byte) {
	code := model.Code(err)
	name := code.String()
	if code == model.Unknown {
		name = model.Internal.String()
	}
	if code == model.Canceled {
		name = model.Unavailable.String()
	}
	return nswire.Status(code), web.Marshal(nswire.Error{Error: err.Error(), Code: name, OutcomeUnknown: errors.Is(err, model.ErrOutcomeUnknown)})
}

func writeError(w http.ResponseWriter, err error) {
	status, body := errorBody(err)
	web.WriteRaw(w, status, body)
}

// openAPI describes every route; it is served at /openapi.yaml.
//
//go:embed openapi.yaml
var openAPI []byte

// Traced returns s reporting to OpenTelemetry: the HTTP server metrics and
// a span per request (but the probes), named by its route and continuing
// the trace prop extracts. Its driver calls are children of the span when
// s's NameService has the same providers.
func (s *Server) Traced(tp trace.TracerProvider, mp metric.MeterProvider, prop propagation.TextMapPropagator) http.Handler {
	return otelhttp.NewHandler(s, "ns serve",
		otelhttp.WithTracerProvider(tp), otelhttp.WithMeterProvider(mp), otelhttp.WithPropagators(prop),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return routeLabel(s.mux, r) }),
		otelhttp.WithFilter(func(r *http.Request) bool {
			return !slices.Contains([]string{"/healthz", "/readyz", "/metrics"}, r.URL.Path)
		}))
}
