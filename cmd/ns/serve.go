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

	"nameservice.dev/nameservice/server"
)

// serveFlags are the flags of ns serve.
type serveFlags struct {
	listen, tokens, issuers, cert, key, logLevel string
	pageTokenKey                                 string
	noAuth                                       bool
	maxBody                                      int64
	maxStreams                                   int
	pollInterval, keepAlive, shutdownGrace       time.Duration
	readHeaderTimeout, idleTimeout, bodyTimeout  time.Duration
}

func init() {
	var f serveFlags
	commands["serve"] = &command{
		usage: "--listen ADDR [--tokens FILE] [--trusted-issuers FILE] [--tls-cert F --tls-key F] [--insecure-no-auth]",
		nargs: 0,
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&f.listen, "listen", "127.0.0.1:8090", "")
			fs.StringVar(&f.tokens, "tokens", "", "")
			fs.StringVar(&f.issuers, "trusted-issuers", "", "")
			fs.StringVar(&f.cert, "tls-cert", "", "")
			fs.StringVar(&f.key, "tls-key", "", "")
			fs.StringVar(&f.logLevel, "log-level", "info", "")
			fs.StringVar(&f.pageTokenKey, "page-token-key", "", "")
			fs.BoolVar(&f.noAuth, "insecure-no-auth", false, "")
			fs.Int64Var(&f.maxBody, "max-body", server.DefaultMaxBodyBytes, "")
			fs.IntVar(&f.maxStreams, "max-streams", server.DefaultMaxStreams, "")
			fs.DurationVar(&f.pollInterval, "poll-interval", server.DefaultPollInterval, "")
			fs.DurationVar(&f.keepAlive, "keep-alive", server.DefaultKeepAlive, "")
			fs.DurationVar(&f.shutdownGrace, "shutdown-grace", 30*time.Second, "")
			fs.DurationVar(&f.readHeaderTimeout, "read-header-timeout", 10*time.Second, "")
			fs.DurationVar(&f.idleTimeout, "idle-timeout", 2*time.Minute, "")
			fs.DurationVar(&f.bodyTimeout, "body-timeout", 30*time.Second, "")
		},
		run: func(c *call) error { return serve(c, f) },
	}
}

// serve runs the HTTP service over c.ns until the command's context ends
// (SIGINT, SIGTERM), then shuts down gracefully: it stops accepting, ends
// the event streams and lets in-flight requests, pushes included, finish
// within the grace period.
func serve(c *call, f serveFlags) error {
	log, err := newLogger(f.logLevel)
	if err != nil {
		return err
	}
	opts := server.Options{Logger: log, MaxBodyBytes: f.maxBody, MaxStreams: f.maxStreams,
		PollInterval: f.pollInterval, KeepAlive: f.keepAlive, BodyTimeout: f.bodyTimeout}
	if err := authOptions(&opts, f); err != nil {
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
	if f.noAuth && !isLoopback(ln.Addr()) {
		ln.Close()
		return usagef("--insecure-no-auth is allowed only on a loopback address, not %s", ln.Addr())
	}
	srv := server.New(c.ns, opts)
	hs := srv.HTTPServer(server.Limits{ReadHeaderTimeout: f.readHeaderTimeout, IdleTimeout: f.idleTimeout})
	scheme := "http"
	if f.cert != "" || f.key != "" {
		if f.cert == "" || f.key == "" {
			ln.Close()
			return usagef("--tls-cert and --tls-key go together")
		}
		cert, err := tls.LoadX509KeyPair(f.cert, f.key)
		if err != nil {
			ln.Close()
			return fmt.Errorf("serve: TLS: %w", err)
		}
		hs.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		ln = tls.NewListener(ln, hs.TLSConfig)
		scheme = "https"
	}
	log.Info("serving", slog.String("url", scheme+"://"+ln.Addr().String()), slog.Bool("auth", !f.noAuth))
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

func authOptions(opts *server.Options, f serveFlags) error {
	if f.noAuth {
		if f.tokens != "" || f.issuers != "" {
			return usagef("--insecure-no-auth excludes --tokens and --trusted-issuers")
		}
		opts.NoAuth = true
		return nil
	}
	var cfg server.AuthConfig
	if f.tokens != "" {
		t, err := server.LoadTokenFile(f.tokens)
		if err != nil {
			return err
		}
		cfg.Tokens = t
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
	if len(cfg.Tokens) == 0 && len(cfg.TrustedIssuers) == 0 {
		return usagef("serve needs --tokens FILE or --trusted-issuers FILE (or --insecure-no-auth on a loopback address)")
	}
	a, err := server.NewAuthenticator(cfg)
	if err != nil {
		return err
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

func isLoopback(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}

func newLogger(level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usagef("--log-level %q: want debug, info, warn or error", level)
	}
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: l})), nil
}
