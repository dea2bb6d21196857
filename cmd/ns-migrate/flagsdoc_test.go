package main

import (
	"bytes"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestFlagsDocumented: the flag table of docs/migrate.md names exactly the
// flags ns-migrate takes (as its --help lists them).
func TestFlagsDocumented(t *testing.T) {
	var help bytes.Buffer
	parseFlags([]string{"--help"}, &help)
	var got []string
	for _, m := range regexp.MustCompile(`(?m)^  --([a-z][a-z0-9-]*)`).FindAllStringSubmatch(help.String(), -1) {
		got = append(got, m[1])
	}
	slices.Sort(got)
	b, err := os.ReadFile("../../docs/migrate.md")
	if err != nil {
		t.Fatal(err)
	}
	var doc []string
	in := false
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(l, "| flag | meaning |"):
			in = true
		case in && !strings.HasPrefix(l, "|"):
			in = false
		case in:
			cell, _, _ := strings.Cut(strings.TrimPrefix(l, "|"), "|")
			for _, m := range regexp.MustCompile(`--([a-z][a-z0-9-]*)`).FindAllStringSubmatch(cell, -1) {
				doc = append(doc, m[1])
			}
		}
	}
	slices.Sort(doc)
	if doc = slices.Compact(doc); len(got) == 0 || !slices.Equal(got, doc) {
		t.Errorf("ns-migrate takes %q, docs/migrate.md's table names %q", got, doc)
	}
}

// TestFlagsSpelledWithDoubleDashes: --help and flag errors name the flags
// as docs/migrate.md and ns do, --name.
func TestFlagsSpelledWithDoubleDashes(t *testing.T) {
	r := runCmd(t, "--help")
	if !strings.Contains(r.stdout, "\n  --verify-only\n") || regexp.MustCompile(`(?m)^  -[a-z]`).MatchString(r.stdout) {
		t.Errorf("--help does not name the flags --name:\n%s", r.stdout)
	}
	for args, name := range map[string]string{"--nosuch": "--nosuch", "--from mem://a --to mem://b --parallel x": "--parallel"} {
		r := runCmd(t, strings.Fields(args)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, name) || strings.Contains(r.stderr, " "+name[1:]) {
			t.Errorf("ns-migrate %s: exit %d, stderr %q; want exit 2 naming %s", args, r.code, r.stderr, name)
		}
	}
}
