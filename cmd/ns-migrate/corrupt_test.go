package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"nameservice.dev/nameservice"
)

// TestCorruptSourceFile breaks two record files of a file:// source, the
// first record in ID order and one in the middle, and migrates with various
// pages: every other record is copied, each bad one is reported with its
// path and ID, and the run exits 1.
func TestCorruptSourceFile(t *testing.T) {
	for _, pageSize := range []string{"1", "2", "100"} {
		t.Run("page-size="+pageSize, func(t *testing.T) {
			dir := t.TempDir()
			from, to := fileURL(dir), memURL(t, "dst")
			ids := seed(t, open(t, from))
			bad := map[string]string{
				"books:main": filepath.Join(dir, "ns@v2", "books", "main.json"),
				"old:main":   filepath.Join(dir, "ns@v2", "old", "main.json"),
			}
			for _, p := range bad {
				must(t, os.WriteFile(p, []byte(`{"@context": {"f": `), 0o644))
			}
			report := filepath.Join(t.TempDir(), "report.jsonl")

			r := want(t, exitFail, "--from", from, "--to", to, "--page-size", pageSize, "--report", report, "--verify")
			t.Log(r.stdout)
			var good []string
			for _, id := range ids {
				if bad[id] == "" {
					good = append(good, id)
				}
			}
			var copied []string
			for rec, err := range open(t, to).List(context.Background(), nameservice.ListOptions{IncludeRetracted: true}) {
				must(t, err)
				copied = append(copied, rec.ID.String())
			}
			if !slices.Equal(copied, good) {
				t.Fatalf("copied %v, want %v\n%s%s", copied, good, r.stdout, r.stderr)
			}
			failed := map[string]string{}
			for _, l := range reportLines(t, report) {
				if l.Result == resultFailed && l.Action != "verify" {
					failed[l.ID] = l.Error
				}
			}
			for id, path := range bad {
				if !strings.Contains(failed[id], path) {
					t.Errorf("report for %s: %q, want an error naming %s", id, failed[id], path)
				}
				if !strings.Contains(r.stdout, "failed "+id+": source: list: record "+id+": fs: "+path) {
					t.Errorf("output does not report %s with its path:\n%s", id, r.stdout)
				}
			}
			if len(failed) != len(bad) {
				t.Errorf("failed records %v, want just %v", failed, bad)
			}
			if !strings.Contains(r.stdout, "create 3, skip 0, advance 0, conflict 0, failed 2") {
				t.Errorf("summary:\n%s", r.stdout)
			}
		})
	}
}

// TestCorruptNestedFile breaks a file whose path alone does not give its ID
// (ns@v2/tenant/a/main.json: tenant/a:main or tenant:a/main). The fs driver
// places it where its path suggests and fails only the page that reaches it:
// the record is reported with its path, the others are copied, and the run
// exits 1.
func TestCorruptNestedFile(t *testing.T) {
	dir := t.TempDir()
	from, to := fileURL(dir), memURL(t, "dst")
	seed(t, open(t, from))
	path := filepath.Join(dir, "ns@v2", "tenant", "a", "main.json")
	must(t, os.WriteFile(path, []byte("{"), 0o644))
	r := want(t, exitFail, "--from", from, "--to", to)
	t.Log(r.stdout)
	if !strings.Contains(r.stdout, "failed tenant/a:main: source: list: record tenant/a:main: fs: "+path) || strings.Count(r.stdout, "failed tenant") != 1 {
		t.Fatalf("want tenant/a:main reported once with its path:\n%s", r.stdout)
	}
	// The file driver reports a nested file it cannot read at the position
	// its path suggests, so the listing goes on past it.
	if strings.Contains(r.stdout, "listing the source stopped") || !strings.Contains(r.stdout, "create 4, skip 0, advance 0, conflict 0, failed 1") {
		t.Fatalf("want the other four records copied:\n%s", r.stdout)
	}
}
