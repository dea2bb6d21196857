package server_test

import (
	"strings"
	"testing"
)

// TestFlureeBranchRoutes drives Fluree's data-route equivalents with
// Fluree's bodies: create (201 with ledger_id, branch, source, t), list
// (the live branches in scope), drop (refused with branches, then done).
func TestFlureeBranchRoutes(t *testing.T) {
	s, _ := BranchServer(t)
	s.Token = "secret-t1"
	WantCall(t, "create", s, "POST", "/fluree/branch", `{"ledger":"t1/db","branch":"dev"}`, 201,
		`{"ledger_id":"t1/db:dev","branch":"dev","source":"main","t":3}`)
	WantCall(t, "create from dev", s, "POST", "/v1/fluree/branch", `{"ledger":"t1/db","branch":"feature/x","source":"dev"}`, 201,
		`{"ledger_id":"t1/db:feature/x","branch":"feature/x","source":"dev","t":3}`)
	if st, b := s.Call(t, "POST", "/fluree/branch", `{"ledger":"t1/db","branch":"dev"}`); st != 409 || !strings.Contains(b, `"@type":"err:db/LedgerExists"`) {
		t.Fatalf("create again: %d %s", st, b)
	}
	if st, b := s.Call(t, "POST", "/fluree/branch", `{"ledger":"t1/db","branch":"old","at":"t:2"}`); st != 400 {
		t.Fatalf("create at a commit: %d %s", st, b)
	}
	WantCall(t, "list", s, "GET", "/fluree/branch/t1/db", "", 200,
		`[{"branch":"dev","ledger_id":"t1/db:dev","t":3,"source":"main"},{"branch":"feature/x","ledger_id":"t1/db:feature/x","t":3,"source":"dev"},{"branch":"main","ledger_id":"t1/db:main","t":3}]`)
	WantCall(t, "list out of scope", s, "GET", "/fluree/branch/t2/db", "", 404,
		`{"error":"Ledger not found","status":404,"@type":"err:api/NotFound"}`)
	if st, b := s.Call(t, "POST", "/fluree/drop-branch", `{"ledger":"t1/db","branch":"dev"}`); st != 409 || !strings.Contains(b, "has 1 branch") {
		t.Fatalf("drop of a branch with branches: %d %s", st, b)
	}
	WantCall(t, "drop", s, "POST", "/fluree/drop-branch", `{"ledger":"t1/db","branch":"feature/x"}`, 200,
		`{"ledger_id":"t1/db:feature/x","status":"dropped","deferred":false}`)
	if st, b := s.Call(t, "POST", "/fluree/drop-branch", `{"ledger":"t2/db","branch":"main"}`); st != 404 {
		t.Fatalf("drop out of scope: %d %s", st, b)
	}
}
