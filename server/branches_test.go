package server_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"nameservice.dev/nameservice/internal/testing/servertest"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/server"
	"nameservice.dev/nameservice/server/auth"
)

// branchServer serves t1/db (head at t 3) with tokens: a writer of t1/, a
// writer of t1/db:feature alone, a reader of everything and an admin of
// t1/; its log goes to the returned buffer.
func branchServer(t *testing.T) (*servertest.Server, *testenv.Buffer) {
	t.Helper()
	a, err := auth.NewAuthenticator(auth.Config{Tokens: []auth.TokenEntry{
		{Name: "t1-writer", SHA256: auth.HashToken("secret-t1"), Read: []string{"t1/"}, Write: []string{"t1/"}},
		{Name: "feature", SHA256: auth.HashToken("secret-feature"), Read: []string{"t1/db:feature"}, Write: []string{"t1/db:feature"}},
		{Name: "reader", SHA256: auth.HashToken("secret-reader"), Read: []string{""}},
		{Name: "t1-admin", SHA256: auth.HashToken("secret-admin"), Read: []string{"t1/"}, Write: []string{"t1/"}, Admin: []string{"t1/"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	logs := &testenv.Buffer{}
	s := servertest.Start(t, server.Options{Auth: a, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	ctx := context.Background()
	for _, id := range []string{"t1/db", "t2/db"} {
		servertest.Must(t, s.NS.Init(ctx, id))
		_, err := s.NS.PublishCommit(ctx, id, 3, "c3")
		servertest.Must(t, err)
	}
	return s, logs
}

// TestBranchRoutes creates and drops branches through /ns/v1 within and
// outside the scopes: a create needs write access to the branch and read
// access to its source, which otherwise answers as missing.
func TestBranchRoutes(t *testing.T) {
	s, _ := branchServer(t)
	s.Token = "secret-t1"
	st, b := s.Call(t, "POST", "/ns/v1/branches/t1/db:dev", `{}`)
	if st != 201 || !strings.Contains(b, `"source_branch":"main"`) || !strings.Contains(b, `"head":{"v":3,`) {
		t.Fatalf("create: %d %s", st, b)
	}
	if st, b := s.Call(t, "POST", "/ns/v1/branches/t1/db:dev", `{}`); st != 409 || !strings.Contains(b, `"code":"AlreadyExists"`) {
		t.Fatalf("create again: %d %s", st, b)
	}
	st, b = s.Call(t, "POST", "/ns/v1/branches/t1/db:old", `{"from":"main","at":{"address":"c2","t":2}}`)
	if st != 201 || !strings.Contains(b, `"branch_point":{"address":"c2","t":2}`) {
		t.Fatalf("create at a commit: %d %s", st, b)
	}
	if st, b := s.Call(t, "POST", "/ns/v1/branches/t2/db:dev", `{}`); st != 404 {
		t.Fatalf("create out of the write scope: %d %s", st, b)
	}
	st, b = s.Call(t, "DELETE", "/ns/v1/branches/t1/db:main", "")
	if st != 409 || !strings.Contains(b, `"code":"HasBranches"`) || !strings.Contains(b, "has 2 branch") {
		t.Fatalf("drop of a source with branches: %d %s", st, b)
	}
	if st, b := s.Call(t, "DELETE", "/ns/v1/branches/t1/db:old", ""); st != 204 {
		t.Fatalf("drop: %d %s", st, b)
	}

	// Write access to the branch alone: the source answers as missing.
	s.Token = "secret-feature"
	wantCall(t, "source out of the read scope", s, "POST", "/ns/v1/branches/t1/db:feature", `{}`, 404,
		`{"error":"not found: t1/db:main","code":"NotFound"}`)
	s.Token = "secret-reader"
	if st, b := s.Call(t, "DELETE", "/ns/v1/branches/t1/db:dev", ""); st != 403 {
		t.Fatalf("a reader's drop: %d %s", st, b)
	}
	rec, err := s.NS.Lookup(context.Background(), "t1/db")
	servertest.Must(t, err)
	if rec.Branches != 1 {
		t.Fatalf("t1/db has %d branches, want 1 (dev)", rec.Branches)
	}
}

// TestResetHeadNeedsAdmin: reset-head is refused to writers and readers
// (403) and to those who cannot read the ID (404), applied for an admin,
// and logged with who asked and what it replaced.
func TestResetHeadNeedsAdmin(t *testing.T) {
	s, logs := branchServer(t)
	body := `{"commit":{"address":"c1","t":1},"clear_index":true}`
	for _, c := range []struct {
		token, id string
		status    int
	}{
		{"secret-t1", "t1/db", 403}, {"secret-reader", "t1/db", 403}, {"secret-admin", "t2/db", 404}, {"secret-feature", "t1/db", 404},
	} {
		s.Token = c.token
		if st, b := s.Call(t, "POST", "/ns/v1/reset-head/"+c.id+":main", body); st != c.status {
			t.Fatalf("%s resets %s: %d %s, want %d", c.token, c.id, st, b, c.status)
		}
	}
	head, err := s.NS.Head(context.Background(), "t1/db")
	servertest.Must(t, err)
	if head.V != 3 || strings.Contains(logs.String(), "head reset") {
		t.Fatalf("a refused reset changed the head (%v) or was logged as done", head)
	}
	s.Token = "secret-admin"
	st, b := s.Call(t, "POST", "/ns/v1/reset-head/t1/db:main", body)
	if st != http.StatusOK || !strings.Contains(b, `"head":{"v":3,`) {
		t.Fatalf("admin's reset: %d %s, want 200 with the record before", st, b)
	}
	if head, _ = s.NS.Head(context.Background(), "t1/db"); head.V != 1 {
		t.Fatalf("head after reset: %v", head)
	}
	log := logs.String()
	if !strings.Contains(log, `"msg":"head reset"`) || !strings.Contains(log, `"principal":"t1-admin"`) || !strings.Contains(log, `"id":"t1/db:main"`) {
		t.Fatalf("the reset is not logged with its principal and ID:\n%s", log)
	}
}

// TestFlureeBranchRoutes drives Fluree's data-route equivalents with
// Fluree's bodies: create (201 with ledger_id, branch, source, t), list
// (the live branches in scope), drop (refused with branches, then done).
func TestFlureeBranchRoutes(t *testing.T) {
	s, _ := branchServer(t)
	s.Token = "secret-t1"
	wantCall(t, "create", s, "POST", "/fluree/branch", `{"ledger":"t1/db","branch":"dev"}`, 201,
		`{"ledger_id":"t1/db:dev","branch":"dev","source":"main","t":3}`)
	wantCall(t, "create from dev", s, "POST", "/v1/fluree/branch", `{"ledger":"t1/db","branch":"feature/x","source":"dev"}`, 201,
		`{"ledger_id":"t1/db:feature/x","branch":"feature/x","source":"dev","t":3}`)
	if st, b := s.Call(t, "POST", "/fluree/branch", `{"ledger":"t1/db","branch":"dev"}`); st != 409 || !strings.Contains(b, `"@type":"err:db/LedgerExists"`) {
		t.Fatalf("create again: %d %s", st, b)
	}
	if st, b := s.Call(t, "POST", "/fluree/branch", `{"ledger":"t1/db","branch":"old","at":"t:2"}`); st != 400 {
		t.Fatalf("create at a commit: %d %s", st, b)
	}
	wantCall(t, "list", s, "GET", "/fluree/branch/t1/db", "", 200,
		`[{"branch":"dev","ledger_id":"t1/db:dev","t":3,"source":"main"},{"branch":"feature/x","ledger_id":"t1/db:feature/x","t":3,"source":"dev"},{"branch":"main","ledger_id":"t1/db:main","t":3}]`)
	wantCall(t, "list out of scope", s, "GET", "/fluree/branch/t2/db", "", 404,
		`{"error":"Ledger not found","status":404,"@type":"err:api/NotFound"}`)
	if st, b := s.Call(t, "POST", "/fluree/drop-branch", `{"ledger":"t1/db","branch":"dev"}`); st != 409 || !strings.Contains(b, "has 1 branch") {
		t.Fatalf("drop of a branch with branches: %d %s", st, b)
	}
	wantCall(t, "drop", s, "POST", "/fluree/drop-branch", `{"ledger":"t1/db","branch":"feature/x"}`, 200,
		`{"ledger_id":"t1/db:feature/x","status":"dropped","deferred":false}`)
	if st, b := s.Call(t, "POST", "/fluree/drop-branch", `{"ledger":"t2/db","branch":"main"}`); st != 404 {
		t.Fatalf("drop out of scope: %d %s", st, b)
	}
}
