package docstore

import (
	"encoding/json"
	"errors"
	"testing"

	"nameservice.dev/nameservice/model"
)

// FuzzDocumentDecode feeds arbitrary documents to the decoders of meta and
// concern documents: they must never panic and fail only with ErrInternal;
// what they accept is a valid identity, and a value that round-trips through
// a document unchanged.
//
//	go test -fuzz FuzzDocumentDecode ./drivers/docstore/
func FuzzDocumentDecode(f *testing.F) {
	f.Add("mydb:main", "ledger", "mydb", "main", int64(3), `{"address":"c3","t":3}`)
	f.Add("s:main", "graph_source", "s", "main", int64(1), `{"k1":1.2,"l":[null,{"a":"b"}]}`)
	f.Add(":", "ledger", "", "", int64(0), ``)
	f.Add("a:b", "ledger", "a", "b", int64(-1), `{"a":1,"a":2}`)
	f.Fuzz(func(t *testing.T, pk, kind, name, branch string, v int64, payload string) {
		d := &document{PK: pk, SK: skMeta, Kind: kind, Name: name, Branch: branch, V: v, Payload: payload}
		if id, meta, err := d.meta(); err != nil {
			if !errors.Is(err, model.ErrInternal) {
				t.Fatalf("meta error does not wrap ErrInternal: %v", err)
			}
		} else if !meta.Kind.Valid() || id.String() != pk || id.Validate() != nil {
			t.Fatalf("meta accepted kind %q, id %v for pk %q", meta.Kind, id, pk)
		}
		val, err := d.value()
		if err != nil {
			if !errors.Is(err, model.ErrInternal) {
				t.Fatalf("value error does not wrap ErrInternal: %v", err)
			}
			return
		}
		var n document
		if err := n.setValue(val); err != nil {
			t.Fatalf("accepted value cannot be written: %v", err)
		}
		back, err := n.value()
		if err != nil || !back.Equal(val) {
			a, _ := json.Marshal(val)
			t.Fatalf("value %s does not round-trip: %v", a, err)
		}
	})
}

// FuzzBranchOpsDecode feeds arbitrary branch_ops text to its decoder: no
// panic, errors wrap ErrInternal, and what it accepts writes back the same.
func FuzzBranchOpsDecode(f *testing.F) {
	f.Add(`[{"op":"create","branch":"db:dev","token":"t","incarnation":"t","at":1,"delta":1}]`)
	f.Add(`[{"op":"drop"}]`)
	f.Add(`{"op":"create"}`)
	f.Fuzz(func(t *testing.T, text string) {
		d := &document{PK: "db:main", BranchOps: text}
		ops, err := d.branchOps()
		if err != nil {
			if !errors.Is(err, model.ErrInternal) {
				t.Fatalf("error does not wrap ErrInternal: %v", err)
			}
			return
		}
		b, err := json.Marshal(ops)
		if err != nil {
			t.Fatal(err)
		}
		again, err := (&document{BranchOps: string(b)}).branchOps()
		if err != nil || len(again) != len(ops) {
			t.Fatalf("%s does not round-trip: %v", b, err)
		}
	})
}
