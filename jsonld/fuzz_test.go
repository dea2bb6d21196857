package jsonld

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// FuzzDecode feeds arbitrary bytes to the decoder: it must never panic.
// Whatever decodes into a record must also survive being written in both
// dialects, over its own file, and read back unchanged.
//
//	go test -fuzz FuzzDecode ./jsonld/
func FuzzDecode(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join(fixtureRoot, "*", "ns@v2", "*", "*.json"))
	for _, s := range seeds {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"@context": "https://ns.flur.ee/db#", "@id": "a:b", "t": 1, "ledgerCommit": "x", "status": "ready"}`))
	f.Add([]byte(`{"@context": [{"@vocab": "https://ns.flur.ee/db#"}, {"x": "f:y"}], "@type": "IndexSource", "name": "n", "branch": "b"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sameMembers(t, data)
		sameCompact(t, data)
		file, err := Decode(data)
		if err != nil {
			return
		}
		id, ok, err := file.RecordID()
		if err != nil || !ok {
			return
		}
		rec, err := Assemble(id, file)
		if err != nil {
			return
		}
		for _, d := range []Dialect{Spec, FlureeV4} {
			out, err := Encode(rec, EncodeOptions{Dialect: d, Parts: mainParts | IndexPart, Prev: file})
			if err != nil {
				continue // a kept member that cannot be written in this dialect
			}
			back, err := Decode(out)
			if err != nil {
				t.Fatalf("%s: re-encoded file does not decode: %v\n%s", d, err, out)
			}
			got, err := Assemble(id, back)
			if err != nil {
				t.Fatalf("%s: re-encoded file does not assemble: %v\n%s", d, err, out)
			}
			assertSameRecord(t, rec, got)
		}
	})
}

// sameMembers checks that the two ways of splitting an object agree on
// valid text: the fast one over the text jsontext compacts, and the one
// with encoding/json's tokens.
func sameMembers(t *testing.T, data []byte) {
	t.Helper()
	if !json.Valid(data) || !utf8.Valid(data) {
		return
	}
	fast, ferr := parseObject(data)
	slow, serr := tokenObject(data)
	if (ferr == nil) != (serr == nil) || ferr != nil && ferr.Error() != serr.Error() {
		t.Fatalf("split %q: errors differ: %v / %v", data, ferr, serr)
	}
	if ferr != nil {
		return
	}
	if len(fast) != len(slow) {
		t.Fatalf("split %q: %d members / %d", data, len(fast), len(slow))
	}
	for i := range fast {
		if fast[i].key != slow[i].key || !bytes.Equal(fast[i].raw, slow[i].raw) {
			t.Fatalf("split %q: member %d is %q=%s / %q=%s", data, i, fast[i].key, fast[i].raw, slow[i].key, slow[i].raw)
		}
	}
}

// sameCompact checks jsontext's compaction, which parseObject uses,
// against json.Compact on valid text.
func sameCompact(t *testing.T, data []byte) {
	t.Helper()
	if !json.Valid(data) {
		return
	}
	var want bytes.Buffer
	if err := json.Compact(&want, data); err != nil {
		t.Fatal(err)
	}
	got := jsontext.Value(slices.Clone(data))
	if err := got.Compact(); err != nil || !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("compact %q = %q, want %q", data, got, want.Bytes())
	}
}
