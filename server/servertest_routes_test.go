package server_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/drivers/mem"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/server"
	"nameservice.dev/nameservice/server/auth"
)

// NewFuzzServer is a server over a store holding ledger db, for in-process
// fuzzing of the request decoders.
func NewFuzzServer(f *testing.F, opts server.Options) (*server.Server, *nameservice.NameService) {
	ns := nameservice.New(mem.NewStore().Open())
	Must(f, ns.Init(context.Background(), "db"))
	if opts.Auth == nil {
		opts.NoAuth = true
	}
	return server.New(ns, opts), ns
}

// ServeOnce serves one request to h in process, and returns its answer.
func ServeOnce(h http.Handler, method, path, body string, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// Allowed are the answers a malformed or hostile body may get; never a 500.
var Allowed = map[int]bool{200: true, 201: true, 204: true, 400: true, 404: true, 409: true, 413: true, 415: true, 422: true}

// WantCall fails unless the request answers status and exactly wantBody.
func WantCall(t *testing.T, what string, s *Server, method, path, body string, status int, wantBody string) {
	t.Helper()
	st, b := s.Call(t, method, path, body)
	Want(t, what, st, b, status, wantBody)
}

// BranchServer serves t1/db (head at t 3) with tokens: a writer of t1/, a
// writer of t1/db:feature alone, a reader of everything and an admin of
// t1/; its log goes to the returned buffer.
func BranchServer(t *testing.T) (*Server, *testenv.Buffer) {
	t.Helper()
	a, err := auth.NewAuthenticator(auth.Config{Tokens: []auth.TokenEntry{
		{Name: "t1-writer", SHA256: auth.HashToken("secret-t1"), Read: []string{"t1/"}, Write: []string{"t1/"}},
		{Name: "feature", SHA256: auth.HashToken("secret-feature"), Read: []string{"t1/db:feature"}, Write: []string{"t1/db:feature"}},
		{Name: "reader", SHA256: auth.HashToken("secret-reader"), Read: []string{""}},
		{Name: "t1-admin", SHA256: auth.HashToken("secret-admin"), Read: []string{"t1/"}, Write: []string{"t1/"}, Admin: []string{"t1/"}},
	}})
	Must(t, err)
	logs := &testenv.Buffer{}
	s := Start(t, server.Options{Auth: a, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	ctx := context.Background()
	for _, id := range []string{"t1/db", "t2/db"} {
		Must(t, s.NS.Init(ctx, id))
		_, err := s.NS.PublishCommit(ctx, id, 3, "c3")
		Must(t, err)
	}
	return s, logs
}
