package jsonld

import (
	"os"
	"path/filepath"
	"testing"
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
