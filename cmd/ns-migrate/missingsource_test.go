package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestMissingSourceDirectory: a file source whose directory does not exist
// (a mistyped path) is an error naming it, not an empty nameservice copied
// and verified with exit 0, which would let a runbook switch its writers
// to an empty target.
func TestMissingSourceDirectory(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-dir")
	for _, extra := range [][]string{nil, {"--verify"}, {"--verify-only"}, {"--dry-run"}} {
		args := append([]string{"--from", "file://" + missing, "--to", memURL(t, "dst")}, extra...)
		r := runCmd(t, args...)
		if r.code == exitOK || !strings.Contains(r.stderr, missing) {
			t.Errorf("ns-migrate %s: exit %d, stderr %q; want a failure naming the directory", strings.Join(args, " "), r.code, r.stderr)
		}
	}
}
