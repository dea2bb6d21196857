package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// docBlock is one fenced code block of the documentation, with the
// example mark written just before it (see exampleMark).
type docBlock struct {
	file string // relative to the repository's root
	line int    // of the opening fence
	lang string // the fence's info string: sh, go, json, ... ("" for none)
	text string
	mark string // the text of its <!-- example: ... --> comment, "" for none
}

func (b docBlock) String() string { return b.file + ":" + strconv.Itoa(b.line) + " (" + b.lang + ")" }

// exampleMark is the comment that tells the docs-examples test what a block
// is: `<!-- example: KIND[: note] -->` on the lines just before the fence.
var exampleMark = regexp.MustCompile(`<!--\s*example:\s*(.*?)\s*-->\s*$`)

// repoRoot is the repository's root, seen from this package's directory.
const repoRoot = "../.."

// docFiles are the files whose examples are run: README.md and docs/*.md.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{filepath.Join(repoRoot, "README.md")}, files...)
}

// docBlocks returns the fenced code blocks of the file at path.
func docBlocks(t *testing.T, path string) []docBlock {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(repoRoot, path)
	var blocks []docBlock
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		// A fence may be indented by up to three spaces (a block in a list
		// item); its lines lose that indentation.
		line := strings.TrimLeft(lines[i], " ")
		indent := len(lines[i]) - len(line)
		lang, ok := strings.CutPrefix(line, "```")
		if !ok || indent > 3 {
			continue
		}
		blk := docBlock{file: filepath.ToSlash(rel), line: i + 1, lang: strings.TrimSpace(lang)}
		// The mark is on the closest line above that is not blank.
		for j := i - 1; j >= 0; j-- {
			if strings.TrimSpace(lines[j]) == "" {
				continue
			}
			if m := exampleMark.FindStringSubmatch(lines[j]); m != nil {
				blk.mark = m[1]
			}
			break
		}
		var body []string
		for i++; i < len(lines) && !strings.HasPrefix(strings.TrimLeft(lines[i], " "), "```"); i++ {
			l := lines[i]
			for n := 0; n < indent && strings.HasPrefix(l, " "); n++ {
				l = l[1:]
			}
			body = append(body, l)
		}
		blk.text = strings.Join(body, "\n") + "\n"
		blocks = append(blocks, blk)
	}
	return blocks
}

// findDocBlock returns the one block of file (relative to the repository's
// root) of language lang that holds every string of has.
func findDocBlock(t *testing.T, file, lang string, has ...string) docBlock {
	t.Helper()
	var found []docBlock
	for _, b := range docBlocks(t, filepath.Join(repoRoot, file)) {
		if b.lang != lang {
			continue
		}
		all := true
		for _, h := range has {
			all = all && strings.Contains(b.text, h)
		}
		if all {
			found = append(found, b)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s: %d %s blocks hold %q, want 1", file, len(found), lang, has)
	}
	return found[0]
}
