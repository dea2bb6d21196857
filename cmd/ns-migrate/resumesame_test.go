package main

import (
	"path/filepath"
	"testing"
)

// TestResumeIntoTheSameFileSpelledOtherwise: --report and --resume that
// name one file in two spellings (./r.jsonl, r.jsonl) append to it, as
// when spelled alike, instead of truncating the lines of the records done.
func TestResumeIntoTheSameFileSpelledOtherwise(t *testing.T) {
	from, to := memURL(t, "src"), memURL(t, "dst")
	seed(t, open(t, from))
	dir := t.TempDir()
	report := filepath.Join(dir, "report.jsonl")
	want(t, exitOK, "--from", from, "--to", to, "--id", "books", "--id", "search", "--report", report)
	want(t, exitOK, "--from", from, "--to", to, "--resume", report, "--report", dir+"/./report.jsonl")
	if n := len(reportLines(t, report)); n != 5 {
		t.Fatalf("report has %d lines after resuming into it, want 5", n)
	}
}
