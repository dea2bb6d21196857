package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"nameservice.dev/nameservice"
)

var storeSeq atomic.Int64

// memURL returns a fresh mem:// URL for the test.
func memURL(t *testing.T, side string) string {
	t.Helper()
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, t.Name())
	return fmt.Sprintf("mem://%s-%s-%d", name, side, storeSeq.Add(1))
}

func open(t testing.TB, url string) *nameservice.NameService {
	t.Helper()
	ns, err := nameservice.Open(context.Background(), url)
	if err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	t.Cleanup(func() { ns.Close() })
	return ns
}

// result of one in-process run of the command.
type runResult struct {
	code           int
	stdout, stderr string
}

func runCmd(t *testing.T, args ...string) runResult {
	t.Helper()
	return runCtx(t, context.Background(), args...)
}

func runCtx(t *testing.T, ctx context.Context, args ...string) runResult {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(ctx, args, &out, &errb)
	return runResult{code, out.String(), errb.String()}
}

// want runs the command and fails the test unless it exits with code.
func want(t *testing.T, code int, args ...string) runResult {
	t.Helper()
	r := runCmd(t, args...)
	if r.code != code {
		t.Fatalf("ns-migrate %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, code, r.stdout, r.stderr)
	}
	return r
}

func recordJSON(t testing.TB, r *nameservice.Record) string {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// lookupJSON returns the record JSON of id in ns, or "" when absent.
func lookupJSON(t testing.TB, ns *nameservice.NameService, id string) string {
	t.Helper()
	r, err := ns.Lookup(context.Background(), id)
	if err != nil {
		if errors.Is(err, nameservice.ErrNotFound) {
			return ""
		}
		t.Fatalf("lookup %s: %v", id, err)
	}
	return recordJSON(t, r)
}

// allJSON returns the record JSON of every record of ns, retracted
// included, in ID order.
func allJSON(t testing.TB, ns *nameservice.NameService) []string {
	t.Helper()
	var out []string
	for r, err := range ns.List(context.Background(), nameservice.ListOptions{IncludeRetracted: true}) {
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		out = append(out, recordJSON(t, r))
	}
	return out
}

// reportLines parses a --report file.
func reportLines(t *testing.T, path string) []reportLine {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []reportLine
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if l == "" {
			continue
		}
		var rl reportLine
		if err := json.Unmarshal([]byte(l), &rl); err != nil {
			t.Fatalf("report line %q: %v", l, err)
		}
		out = append(out, rl)
	}
	return out
}

// copyTree copies directory src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
