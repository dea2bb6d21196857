package main

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docFlagTable returns the flags named in the first cell of the rows of
// the markdown table of file whose header's first cell is head.
func docFlagTable(t *testing.T, file, head string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, file))
	must(t, err)
	var names []string
	in := false
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(l, "| "+head+" |"):
			in = true
		case in && !strings.HasPrefix(l, "|"):
			in = false
		case in:
			cell, _, _ := strings.Cut(strings.TrimPrefix(l, "|"), "|")
			for _, m := range regexp.MustCompile(`--([a-z][a-z0-9-]*)`).FindAllStringSubmatch(cell, -1) {
				names = append(names, m[1])
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// TestServeFlagsDocumented: the flag table of docs/serve.md names exactly
// the flags ns serve takes.
func TestServeFlagsDocumented(t *testing.T) {
	var got []string
	newFlagSet(commands["serve"], new(string), new(string), new(bool)).VisitAll(func(f *flag.Flag) {
		if f.Name != "url" && f.Name != "config" && f.Name != "json" {
			got = append(got, f.Name)
		}
	})
	if doc := docFlagTable(t, "docs/serve.md", "flag"); !slices.Equal(got, doc) {
		t.Errorf("ns serve takes %q, docs/serve.md's table names %q", got, doc)
	}
}

// TestEveryFlagHasUsage: help says what each flag of every command is for.
func TestEveryFlagHasUsage(t *testing.T) {
	for _, e := range listCommands() {
		newFlagSet(e.cmd, new(string), new(string), new(bool)).VisitAll(func(f *flag.Flag) {
			if strings.TrimSpace(f.Usage) == "" {
				t.Errorf("ns %s --%s has no usage in its help", e.name, f.Name)
			}
		})
	}
}
