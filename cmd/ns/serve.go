package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/server"
	"nameservice.dev/nameservice/server/auth"
)

// serveFlags are the flags of ns serve: the server's options and limits,
// and what serve makes more options of.
type serveFlags struct {
	opts                                         server.Options
	limits                                       server.Limits
	oidc                                         auth.OIDCConfig
	listen, tokens, issuers, cert, key, logLevel string
	eventsAuth, otlpEndpoint, pageTokenKey       string
	shutdownGrace                                time.Duration
}

func init() {
	var f serveFlags
	commands["serve"] = &command{
		usage:        "--listen ADDR [--tokens FILE] [--trusted-issuers FILE] [--oidc-issuer ISS --jwks-url URL] [--tls-cert F --tls-key F] [--insecure-no-auth] [--otlp-endpoint URL]",
		summary:      "serve the nameservice over HTTP: Fluree's nameservice routes, the http:// driver's, and the console at /ui",
		example:      "ns --url 'dynamodb://fluree-nameservice?region=eu-west-1' serve --listen 0.0.0.0:8090 --tokens /etc/ns/tokens.json",
		creates:      true,
		nargs:        0,
		otlpEndpoint: &f.otlpEndpoint,
		options:      f.nameserviceOptions,
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&f.listen, "listen", "127.0.0.1:8090", "address to listen on (host:port)")
			fs.StringVar(&f.tokens, "tokens", "", "file of static tokens (JSON; see docs/serve.md)")
			fs.StringVar(&f.issuers, "trusted-issuers", "", "file of did:key issuers whose JWS tokens are accepted")
			fs.StringVar(&f.cert, "tls-cert", "", "TLS certificate file (with --tls-key)")
			fs.StringVar(&f.key, "tls-key", "", "TLS key file (with --tls-cert)")
			fs.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error (debug logs every backend call)")
			fs.StringVar(&f.otlpEndpoint, "otlp-endpoint", "", "export traces and metrics over OTLP/HTTP to this URL (default $OTEL_EXPORTER_OTLP_ENDPOINT)")
			fs.BoolVar(&f.opts.NoAuth, "insecure-no-auth", false, "serve every route to anyone (loopback addresses only)")
			fs.StringVar(&f.eventsAuth, "events-auth", auth.EventsAuthRequired.String(), "required, optional or none: whether /v1/fluree/events needs a token")
			fs.StringVar(&f.oidc.Issuer, "oidc-issuer", "", "accept bearer tokens of this OIDC issuer (with --jwks-url)")
			fs.StringVar(&f.oidc.JWKSURL, "jwks-url", "", "the OIDC issuer's key set")
			fs.StringVar(&f.oidc.Audience, "oidc-audience", "", "the audience OIDC tokens must name")
			fs.DurationVar(&f.oidc.CacheTTL, "jwks-cache-ttl", auth.DefaultJWKSCacheTTL, "how long the key set is kept before it is fetched again")
			fs.Int64Var(&f.opts.MaxBodyBytes, "max-body", server.DefaultMaxBodyBytes, "largest request body, in bytes")
			fs.IntVar(&f.opts.MaxStreams, "max-streams", server.DefaultMaxStreams, "event streams open at once")
			fs.IntVar(&f.opts.MaxStreamsPerPrincipal, "max-streams-per-principal", server.DefaultMaxStreamsPerPrincipal, "event streams one principal may hold")
			fs.Int64Var(&f.opts.IdempotencyCacheBytes, "idempotency-cache-bytes", server.DefaultIdempotencyCacheBytes, "bytes kept of resent writes' outcomes")
			fs.DurationVar(&f.opts.PollInterval, "poll-interval", server.DefaultPollInterval, "how often a backend without a change feed is polled")
			fs.DurationVar(&f.opts.KeepAlive, "keep-alive", server.DefaultKeepAlive, "interval of the event streams' keep-alive comments")
			fs.DurationVar(&f.shutdownGrace, "shutdown-grace", 30*time.Second, "how long in-flight requests get on shutdown")
			fs.IntVar(&f.limits.MaxConns, "max-conns", server.DefaultMaxConns, "connections open at once")
			fs.IntVar(&f.limits.MaxConnsPerAddr, "max-conns-per-addr", server.DefaultMaxConnsPerAddr, "connections of one client address")
			fs.DurationVar(&f.limits.ReadHeaderTimeout, "read-header-timeout", server.DefaultReadHeaderTimeout, "cut off a client that has not sent its headers by then")
			fs.DurationVar(&f.limits.IdleTimeout, "idle-timeout", server.DefaultIdleTimeout, "close a keep-alive connection idle this long")
			fs.DurationVar(&f.opts.BodyTimeout, "body-timeout", server.DefaultBodyTimeout, "cut off a request whose body has not arrived by then")
			fs.DurationVar(&f.opts.WriteTimeout, "write-timeout", server.DefaultWriteTimeout, "cut off an answer (not an event stream) not written by then")
			fs.StringVar(&f.pageTokenKey, "page-token-key", "", "file of the key (32 bytes or more) that seals page tokens; share it between instances behind one balancer")
		},
		run: func(c *call) error { return serve(c, f) },
	}
}

// checkLimits refuses a limit or a duration that is not positive: the
// server would run with its default instead, not what the command said.
func checkLimits(f serveFlags) error {
	for _, l := range []struct {
		flag string
		v    int64
	}{
		{"--max-body", f.opts.MaxBodyBytes}, {"--idempotency-cache-bytes", f.opts.IdempotencyCacheBytes},
		{"--max-streams", int64(f.opts.MaxStreams)}, {"--max-streams-per-principal", int64(f.opts.MaxStreamsPerPrincipal)},
		{"--max-conns", int64(f.limits.MaxConns)}, {"--max-conns-per-addr", int64(f.limits.MaxConnsPerAddr)},
		{"--read-header-timeout", int64(f.limits.ReadHeaderTimeout)}, {"--idle-timeout", int64(f.limits.IdleTimeout)},
		{"--body-timeout", int64(f.opts.BodyTimeout)}, {"--write-timeout", int64(f.opts.WriteTimeout)},
		{"--poll-interval", int64(f.opts.PollInterval)}, {"--keep-alive", int64(f.opts.KeepAlive)},
		{"--shutdown-grace", int64(f.shutdownGrace)}, {"--jwks-cache-ttl", int64(f.oidc.CacheTTL)},
	} {
		if l.v <= 0 {
			return usagef("serve: %s must be positive", l.flag)
		}
	}
	return nil
}

// serve runs the HTTP service over c.ns until the command's context ends
// (SIGINT, SIGTERM), then shuts down gracefully: it stops accepting, ends
// the event streams and lets in-flight requests, pushes included, finish
// within the grace period.
func serve(c *call, f serveFlags) error {
	if err := checkLimits(f); err != nil {
		return err
	}
	log, err := newLogger(f.logLevel)
	if err != nil {
		return err
	}
	opts := f.opts
	opts.Logger = log
	if err := authOptions(&opts, f, log); err != nil {
		return err
	}
	if f.pageTokenKey != "" {
		if opts.PageTokenKey, err = loadPageTokenKey(f.pageTokenKey); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer ln.Close() // closed already when served: Serve closes it
	if ta, ok := ln.Addr().(*net.TCPAddr); opts.NoAuth && !(ok && ta.IP.IsLoopback()) {
		return usagef("--insecure-no-auth is allowed only on a loopback address, not %s", ln.Addr())
	}
	srv := server.New(c.ns, opts)
	hs := srv.HTTPServer(f.limits)
	if c.otel != nil {
		hs.Handler = srv.Traced(c.otel.Tracer, c.otel.Meter, c.otel.Propagator)
	}
	scheme := "http"
	if f.cert != "" || f.key != "" {
		if f.cert == "" || f.key == "" {
			return usagef("--tls-cert and --tls-key go together")
		}
		cert, err := tls.LoadX509KeyPair(f.cert, f.key)
		if err != nil {
			return fmt.Errorf("serve: TLS: %w", err)
		}
		hs.TLSConfig = server.TLSConfig(cert)
		ln = tls.NewListener(ln, hs.TLSConfig)
		scheme = "https"
	}
	log.Info("serving", slog.String("url", scheme+"://"+ln.Addr().String()), slog.Bool("auth", !opts.NoAuth))
	if !opts.NoAuth && opts.EventsAuth != auth.EventsAuthRequired {
		log.Warn("the events route admits watchers without a token: they see the ID and heads of every record",
			slog.String("events_auth", opts.EventsAuth.String()))
	}
	fmt.Fprintf(c.stdout, "listening on %s://%s\n", scheme, ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-c.ctx.Done():
	}
	log.Info("shutting down", slog.Duration("grace", f.shutdownGrace))
	ctx, cancel := context.WithTimeout(context.Background(), f.shutdownGrace)
	defer cancel()
	if err := hs.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: shutdown: %w", err)
	}
	return nil
}

// nameserviceOptions hands the server's log to the library at debug
// level: one line per backend call, beside the request lines.
func (f *serveFlags) nameserviceOptions() ([]nameservice.Option, error) {
	log, err := newLogger(f.logLevel)
	if err != nil || !log.Enabled(context.Background(), slog.LevelDebug) {
		return nil, err
	}
	return []nameservice.Option{nameservice.WithLogHandler(log.Handler())}, nil
}

func authOptions(opts *server.Options, f serveFlags, log *slog.Logger) error {
	mode, err := auth.ParseEventsAuth(f.eventsAuth)
	if err != nil {
		return usagef("--events-auth: %v", err)
	}
	opts.EventsAuth = mode
	if opts.NoAuth {
		if f.tokens != "" || f.issuers != "" || f.oidc.Issuer != "" || f.oidc.JWKSURL != "" {
			return usagef("--insecure-no-auth excludes --tokens, --trusted-issuers and --oidc-issuer")
		}
		return nil
	}
	var cfg auth.Config
	if f.tokens != "" {
		if cfg.Tokens, err = auth.LoadTokenFile(f.tokens); err != nil {
			return err
		}
	}
	if f.issuers != "" {
		b, err := os.ReadFile(f.issuers)
		if err != nil {
			return fmt.Errorf("trusted issuers: %w", err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
				cfg.TrustedIssuers = append(cfg.TrustedIssuers, line)
			}
		}
	}
	if (f.oidc.Issuer == "") != (f.oidc.JWKSURL == "") {
		return usagef("--oidc-issuer and --jwks-url go together")
	}
	if f.oidc.Issuer != "" {
		cfg.OIDC = &f.oidc
		cfg.OIDC.Logger = log
	}
	if len(cfg.Tokens) == 0 && len(cfg.TrustedIssuers) == 0 && cfg.OIDC == nil {
		return usagef("serve needs --tokens FILE, --trusted-issuers FILE or --oidc-issuer ISS --jwks-url URL (or --insecure-no-auth on a loopback address)")
	}
	a, err := auth.NewAuthenticator(cfg)
	if err != nil {
		return err
	}
	if err := a.FetchKeys(); err != nil {
		log.Warn("cannot fetch the OIDC issuer's keys; will try again at the first token", slog.String("error", err.Error()))
	}
	opts.Auth = a
	return nil
}

// loadPageTokenKey reads the secret of --page-token-key: the file's
// content, spaces around it left out.
func loadPageTokenKey(path string) (*server.PageTokenKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--page-token-key: %w", err)
	}
	k, err := server.NewPageTokenKey(bytes.TrimSpace(b))
	if err != nil {
		return nil, usagef("--page-token-key %s: %v (make one with: openssl rand -hex 32 > FILE)", path, err)
	}
	return k, nil
}

func newLogger(level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usagef("--log-level %q: want debug, info, warn or error", level)
	}
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: l})), nil
}
