package jsonld

import (
	"reflect"
	"strings"
	"testing"

	"nameservice.dev/nameservice/model"
)

// TestBranchOps writes f:branchOps, checks that a writer that does not set
// them (a head push) keeps them, and that an empty list removes them.
func TestBranchOps(t *testing.T) {
	id, _ := model.ParseID("db:main")
	rec := model.NewLedger(id, 0)
	rec.Branches = 1
	ops := []BranchOp{{Op: BranchCreate, Branch: "db:dev", Token: "tok1", At: 1700000000000, Delta: 1}}
	parts := Identity | HeadPart | StatusPart | ConfigPart
	for _, d := range []Dialect{Spec, FlureeV4} {
		b, err := Encode(rec, EncodeOptions{Dialect: d, Parts: parts, BranchOps: &ops})
		if err != nil {
			t.Fatal(err)
		}
		f, err := Decode(b)
		if err != nil {
			t.Fatalf("%v\n%s", err, b)
		}
		if !reflect.DeepEqual(f.BranchOps, ops) || f.Branches != 1 {
			t.Fatalf("%s: read back %+v, branches %d\n%s", d, f.BranchOps, f.Branches, b)
		}
		head := model.RefValue("c1", 1)
		rec2 := rec.Clone()
		rec2.Head = &head
		b2, err := Encode(rec2, EncodeOptions{Dialect: d, Parts: parts, Prev: f})
		if err != nil {
			t.Fatal(err)
		}
		f2, err := Decode(b2)
		if err != nil || !reflect.DeepEqual(f2.BranchOps, ops) {
			t.Fatalf("%s: a push dropped the branch ops (%v):\n%s", d, err, b2)
		}
		b3, err := Encode(rec2, EncodeOptions{Dialect: d, Parts: parts, Prev: f2, BranchOps: &[]BranchOp{}})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b3), "branchOps") {
			t.Fatalf("%s: an empty list kept the member:\n%s", d, b3)
		}
	}
	for _, bad := range []string{`[{"op":"merge","branch":"db:x","token":"t"}]`, `[{"op":"create","token":"t"}]`, `{"op":"create"}`} {
		if _, err := Decode([]byte(`{"@context":{"f":"https://ns.flur.ee/db#"},"@id":"db:main","f:branchOps":` + bad + `}`)); err == nil {
			t.Errorf("branchOps %s decoded without an error", bad)
		}
	}
}
