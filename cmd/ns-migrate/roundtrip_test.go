package main

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"nameservice.dev/nameservice/internal/testing/fixturetest"
	"nameservice.dev/nameservice/internal/testing/testenv"
)

var fixtures = fixturetest.NSv2()

// fixtureCases returns a fresh copy of each fixture root, by case name.
func fixtureCases(t *testing.T) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(fixtures)
	if err != nil {
		t.Fatalf("fixtures: %v", err)
	}
	out := map[string]string{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := t.TempDir()
		copyTree(t, filepath.Join(fixtures, e.Name()), dir)
		out[e.Name()] = dir
	}
	if len(out) == 0 {
		t.Fatalf("no fixture cases in %s", fixtures)
	}
	return out
}

func fileURL(dir string) string { return (&url.URL{Scheme: "file", Path: dir}).String() }

// dynamoURL returns the URL of a new table on DynamoDB Local.
func dynamoURL(t testing.TB, endpoint string) string {
	name := fmt.Sprintf("migrate-%d-%d", time.Now().UnixNano()%1e9, storeSeq.Add(1))
	return "dynamodb://" + name + "?endpoint=" + url.QueryEscape(endpoint)
}

func TestFixturesFileToMem(t *testing.T) {
	for name, dir := range fixtureCases(t) {
		t.Run(name, func(t *testing.T) {
			from, to := fileURL(dir), memURL(t, "dst")
			want(t, exitOK, "--from", from, "--to", to, "--verify")
			if got, orig := allJSON(t, open(t, to)), allJSON(t, open(t, from)); !slices.Equal(got, orig) || len(got) == 0 {
				t.Fatalf("copy:\n%s\nsource:\n%s", strings.Join(got, "\n"), strings.Join(orig, "\n"))
			}
		})
	}
}

// TestFixturesThroughDynamoDB copies every fixture into DynamoDB Local and
// from there into a new directory: both copies verify against the
// original, record JSON identical.
func TestFixturesThroughDynamoDB(t *testing.T) {
	endpoint := testenv.DynamoDBEndpoint(t)
	for name, dir := range fixtureCases(t) {
		t.Run(name, func(t *testing.T) {
			orig, table, back := fileURL(dir), dynamoURL(t, endpoint), fileURL(t.TempDir())
			want(t, exitOK, "--from", orig, "--to", table, "--create-table", "--verify")
			want(t, exitOK, "--from", table, "--to", back, "--verify")
			want(t, exitOK, "--from", orig, "--to", back, "--verify-only")
			r := want(t, exitOK, "--from", orig, "--to", table)
			if !strings.Contains(r.stdout, "create 0, skip") {
				t.Fatalf("second copy into DynamoDB is not all skip:\n%s", r.stdout)
			}
			if got, want := allJSON(t, open(t, back)), allJSON(t, open(t, orig)); !slices.Equal(got, want) {
				t.Fatalf("round trip:\n%s\noriginal:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func TestMissingTable(t *testing.T) {
	endpoint := testenv.DynamoDBEndpoint(t)
	from := memURL(t, "src")
	seed(t, open(t, from))
	table := dynamoURL(t, endpoint)
	r := want(t, exitFail, "--from", from, "--to", table)
	if !strings.Contains(r.stderr, "--create-table") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Fatalf("missing table: want one line suggesting --create-table, got:\n%s", r.stderr)
	}
	want(t, exitOK, "--from", from, "--to", table, "--create-table", "--verify")
}
