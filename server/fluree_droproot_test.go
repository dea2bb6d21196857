package server_test

import (
	"context"
	"strings"
	"testing"
)

// TestFlureeDropBranchRefusesTheRoot: Fluree's drop-branch refuses a
// ledger's root branch (400, "Use drop_ledger"): a Fluree client asking
// to drop main must not remove the ledger with its head.
func TestFlureeDropBranchRefusesTheRoot(t *testing.T) {
	s, _ := BranchServer(t)
	s.Token = "secret-t1"
	if st, b := s.Call(t, "POST", "/fluree/drop-branch", `{"ledger":"t1/db","branch":"main"}`); st != 400 || !strings.Contains(b, "root of ledger") {
		t.Fatalf("drop of the ledger's main branch: %d %s", st, b)
	}
	rec, err := s.NS.Lookup(context.Background(), "t1/db")
	if err != nil || rec.Head.V != 3 {
		t.Fatalf("t1/db after the refused drop: %+v, %v", rec, err)
	}
	if st, b := s.Call(t, "POST", "/fluree/drop-branch", `{"ledger":"t1/nosuch","branch":"dev"}`); st != 404 {
		t.Fatalf("drop of a missing branch: %d %s", st, b)
	}
}
