package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"nameservice.dev/nameservice"
)

// FuzzStateFile feeds arbitrary bytes to the ns watch --state parser: it
// must never panic and fail only with ErrInvalidArgument; a map it accepts is
// saved and loaded again unchanged.
//
//	go test -fuzz FuzzStateFile ./cmd/ns/
func FuzzStateFile(f *testing.F) {
	f.Add([]byte(`{"subscriptions":{"mydb:main":{"kind":"ledger","commit_t":42,"index_t":40,"status_v":1,"config_v":0}}}`))
	f.Add([]byte(`{"subscriptions":{"s:main":{"kind":"graph_source","source_type":"db:Bm25Index","index_t":0,"status_v":2,"config_v":1}}}`))
	f.Add([]byte(`{"subscriptions":{"mydb":{"kind":"ledger"}}}`))
	f.Add([]byte(`{"subscriptions":{"a:main":{"kind":"ledger"},"a:main":{"kind":"ledger","commit_t":-1}}}`))
	f.Add([]byte(`{"subscriptions":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseState(data)
		if err != nil {
			if !errors.Is(err, nameservice.ErrInvalidArgument) {
				t.Fatalf("error does not wrap ErrInvalidArgument: %v", err)
			}
			return
		}
		path := filepath.Join(t.TempDir(), "state.json")
		if err := saveState(path, *m); err != nil {
			t.Fatal(err)
		}
		back, err := loadState(path)
		if err != nil {
			b, _ := os.ReadFile(path)
			t.Fatalf("saved state does not load: %v\n%s", err, b)
		}
		a, _ := json.Marshal(m)
		b, _ := json.Marshal(back)
		if string(a) != string(b) {
			t.Fatalf("state changed through its file:\n%s\n%s", a, b)
		}
	})
}

// TestCorruptStateIsRefused: a state file with a repeated ID or a key that
// is not an ID is corrupt; resuming from a guess could miss events.
func TestCorruptStateIsRefused(t *testing.T) {
	for _, s := range []string{
		`{"subscriptions":{"a:main":{"kind":"ledger","commit_t":5},"a:main":{"kind":"ledger","commit_t":1}}}`,
		`{"subscriptions":{"a":{"kind":"ledger"}}}`,
		`{"subscriptions":{"a:main":{"kind":"table"}}}`,
		`{"subscriptions":{"a:main":{"kind":"ledger","commit_t":-3}}}`,
		`{"subscriptions":{},"extra":1}`,
	} {
		if _, err := parseState([]byte(s)); !errors.Is(err, nameservice.ErrInvalidArgument) {
			t.Errorf("parseState(%s) = %v, want ErrInvalidArgument", s, err)
		}
	}
}
