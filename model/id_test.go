package model

import (
	"errors"
	"strings"
	"testing"
)

func TestParseIDAccepts(t *testing.T) {
	for in, want := range map[string]ID{
		"mydb":                          {"mydb", "main"},
		"mydb:dev":                      {"mydb", "dev"},
		"tenant/customers:release/v1.0": {"tenant/customers", "release/v1.0"},
		"a.b:c.d":                       {"a.b", "c.d"},
		"x.indexer":                     {"x.indexer", "main"},
		"données":                       {"données", "main"},
		"caf\u00e9":                     {"caf\u00e9", "main"}, // NFC
		"a b:c d":                       {"a b", "c d"},
	} {
		got, err := ParseID(in)
		if err != nil || got != want {
			t.Errorf("ParseID(%q) = %v, %v; want %v", in, got, err, want)
		}
		if again, err := ParseID(got.String()); err != nil || again != got {
			t.Errorf("ParseID(%q) does not round-trip: %v, %v", got.String(), again, err)
		}
	}
}

func TestParseIDRejects(t *testing.T) {
	for in, why := range map[string]string{
		"":                                 "name is empty",
		":main":                            "name is empty",
		"x:":                               "branch is empty",
		"x:a:b":                            "more than one ':'",
		"x\x00":                            "control character",
		"x\u0085":                          "control character",
		"/x":                               "starts with '/'",
		"x/":                               "empty path segment",
		"x//y":                             "empty path segment",
		"x/./y":                            `"." path segment`,
		"x:..":                             `".." path segment`,
		"x.index":                          `reserved suffix ".index"`,
		"x:b.lock":                         `reserved suffix ".lock"`,
		"a/b.tmp/c":                        `reserved suffix ".tmp"`,
		"x\xff":                            "UTF-8",
		strings.Repeat("n", 508) + ":main": "longer than 512 bytes",
		// Look-alikes and invisible characters (issue 14, item 6).
		" ":          "name is only white space",
		"x: \t ":     "branch is only white space",
		"a\u200bb":   "U+200B",
		"a\u202eb":   "U+202E",
		"a\ufeff":    "U+FEFF",
		"a:b\u2066":  "U+2066",
		"cafe\u0301": "not in Unicode normalisation form NFC",
		"x:\u212b":   "not in Unicode normalisation form NFC",
	} {
		_, err := ParseID(in)
		if !errors.Is(err, ErrInvalidID) || !strings.Contains(err.Error(), why) {
			t.Errorf("ParseID(%q) error = %v; want ErrInvalidID saying %q", in, err, why)
		}
		if Code(err) != InvalidArgument {
			t.Errorf("Code(ParseID(%q)) = %v, want InvalidArgument", in, Code(err))
		}
	}
}

func TestIDAtLimit(t *testing.T) {
	in := strings.Repeat("n", 507) + ":main" // 512 bytes
	if _, err := ParseID(in); err != nil {
		t.Fatalf("a 512-byte ID is rejected: %v", err)
	}
}

func FuzzParseID(f *testing.F) {
	for _, s := range []string{"mydb", "a:b", "t/c:r/v1", "x:..", "x.index", "a\x00", ":", "a:b:c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseID(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidID) {
				t.Fatalf("ParseID(%q) error %v does not wrap ErrInvalidID", s, err)
			}
			return
		}
		again, err := ParseID(id.String())
		if err != nil || again != id {
			t.Fatalf("ParseID(%q) = %v does not round-trip: %v, %v", s, id, again, err)
		}
		if len(id.String()) > MaxIDLength || strings.ContainsRune(id.String(), 0) {
			t.Fatalf("ParseID(%q) accepted %q", s, id)
		}
	})
}

// TestInvalidIDEchoIsBounded: an error repeats at most a bounded prefix of an
// over-long invalid ID, not all of it.
func TestInvalidIDEchoIsBounded(t *testing.T) {
	in := strings.Repeat("x", 10<<10) + "\x00"
	_, err := ParseID(in)
	if !errors.Is(err, ErrInvalidID) {
		t.Fatalf("ParseID = %v, want ErrInvalidID", err)
	}
	if len(err.Error()) > 300 {
		t.Fatalf("error message is %d bytes long; it repeats the ID: %.200s...", len(err.Error()), err)
	}
	if !strings.Contains(err.Error(), "10241 bytes") {
		t.Fatalf("error %q does not say how long the ID was", err)
	}
}
