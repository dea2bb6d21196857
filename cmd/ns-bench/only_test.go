package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestOnlyUnknownDriver: -only with a name that is no driver (a typo) is a
// usage error naming it and the drivers there are, not a run of nothing.
func TestOnlyUnknownDriver(t *testing.T) {
	if os.Getenv("NS_BENCH_TEST_MAIN") == "1" {
		os.Args = []string{"ns-bench", "-only", "mem,bogus", "-n", "1", "-writers", "1", "-rounds", "1", "-list", "1"}
		main()
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestOnlyUnknownDriver$")
	cmd.Env = append(os.Environ(), "NS_BENCH_TEST_MAIN=1")
	out, _ := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(string(out), `"bogus"`) || !strings.Contains(string(out), "fs-b") {
		t.Fatalf("ns-bench -only mem,bogus: exit %d, want 2 naming the unknown driver and the known ones:\n%s", code, out)
	}
}
