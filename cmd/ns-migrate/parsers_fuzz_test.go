package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"nameservice.dev/nameservice"
	_ "nameservice.dev/nameservice/drivers/mem"
)

// FuzzResumeReport feeds arbitrary bytes to the --resume report parser: it
// must never panic, and every ID it counts done comes from a line of the
// input that says so.
//
//	go test -fuzz FuzzResumeReport ./cmd/ns-migrate/
func FuzzResumeReport(f *testing.F) {
	f.Add([]byte(`{"id":"a:main","action":"copy","result":"done"}` + "\n" + `{"id":"b:main","action":"copy","result":"failed","error":"x"}` + "\n"))
	f.Add([]byte("\n\n{\"id\":\"a:main\",\"result\":\"done\"}\n{"))
	f.Add([]byte(`{"id":"a:main","id":"b:main","result":"done"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		done, err := parseDone(bytes.NewReader(data), "report")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "--resume report") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for id := range done {
			found := false
			for _, line := range bytes.Split(data, []byte("\n")) {
				var l reportLine
				if json.Unmarshal(line, &l) == nil && l.ID == id && l.Result == resultDone {
					found = true
					break
				}
			}
			if !found {
				t.Fatalf("%q counted done, but no line says so", id)
			}
		}
	})
}

// FuzzIDsFrom feeds arbitrary bytes to the --ids-from reader over a store
// holding a:main and b/c:dev: it must never panic; each item it sends is a
// record read for a valid ID or an error, and it sends at most one item per
// line (plus one for a read error).
//
//	go test -fuzz FuzzIDsFrom ./cmd/ns-migrate/
func FuzzIDsFrom(f *testing.F) {
	ctx := context.Background()
	src, err := nameservice.Open(ctx, "mem://")
	if err != nil {
		f.Fatal(err)
	}
	for _, id := range []string{"a", "b/c:dev"} {
		if err := src.Init(ctx, id); err != nil {
			f.Fatal(err)
		}
	}
	f.Add([]byte("a\n# comment\n\n  b/c:dev  \nghost\nbad:id:x\n"))
	f.Add([]byte("a:main\r\na"))
	f.Add([]byte(strings.Repeat("x", 70<<10)))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "ids")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s := &selector{idsFrom: path}
		var items []item
		s.scanIDs(ctx, src, func(it item) bool { items = append(items, it); return true })
		if max := bytes.Count(data, []byte("\n")) + 2; len(items) > max {
			t.Fatalf("%d items from %d lines", len(items), max-1)
		}
		for _, it := range items {
			switch {
			case it.err != nil && it.rec != nil:
				t.Fatalf("item %q has both a record and an error", it.id)
			case it.err == nil && it.rec == nil:
				t.Fatalf("item %q has neither a record nor an error", it.id)
			case it.rec != nil && (it.rec.ID.String() != it.id || it.rec.ID.Validate() != nil):
				t.Fatalf("item %q holds record %v", it.id, it.rec.ID)
			}
		}
	})
}
