package main

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
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

// TestDocLinks: every relative link of README.md and docs/ names a file
// that exists and, with #anchor, a heading of that page (GitHub's slugs).
func TestDocLinks(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, f := range docFiles(t) {
		b, err := os.ReadFile(f)
		must(t, err)
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target, anchor, _ := strings.Cut(m[1], "#")
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path := f
			if target != "" {
				path = filepath.Join(filepath.Dir(f), target)
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s links to %s: %v", f, m[1], err)
				continue
			}
			if anchor != "" && strings.HasSuffix(path, ".md") && !slices.Contains(headingSlugs(t, path), anchor) {
				t.Errorf("%s links to %s: %s has no such heading", f, m[1], path)
			}
		}
	}
}

// headingSlugs returns the anchors GitHub gives the headings of the page
// at path: lower case, punctuation but - and _ dropped, spaces as -, and
// -1, -2, ... after a repeated one.
func headingSlugs(t *testing.T, path string) []string {
	var slugs []string
	seen := map[string]int{}
	b, err := os.ReadFile(path)
	must(t, err)
	inFence := false
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(strings.TrimLeft(l, " "), "```") {
			inFence = !inFence
			continue
		}
		h := strings.TrimLeft(l, "#")
		if inFence || len(h) == len(l) || len(l)-len(h) > 6 || !strings.HasPrefix(h, " ") {
			continue
		}
		var s strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(h)) {
			switch {
			case r == ' ':
				s.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				s.WriteRune(r)
			}
		}
		slug := s.String()
		if n := seen[slug]; n > 0 {
			slugs = append(slugs, slug+"-"+strconv.Itoa(n))
		} else {
			slugs = append(slugs, slug)
		}
		seen[slug]++
	}
	return slugs
}
