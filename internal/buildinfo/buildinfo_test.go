package buildinfo

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestReadInTest(t *testing.T) {
	i := Read()
	if i.Go != runtime.Version() {
		t.Errorf("Go = %q, want %q", i.Go, runtime.Version())
	}
	if i.Version == "" {
		t.Error("Version is empty")
	}
}

func TestString(t *testing.T) {
	i := Info{Version: "v1.2.0", Commit: "abc", Time: "2026-01-02T03:04:05Z", Modified: true, Go: "go1.26.0", Platform: "linux/arm64"}
	want := "v1.2.0 (commit abc, 2026-01-02T03:04:05Z, modified) go1.26.0 linux/arm64"
	if got := i.String(); got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	if got := (Info{Version: "(devel)", Go: "go1.26.0"}).String(); got != "(devel) go1.26.0" {
		t.Errorf("String without commit = %q", got)
	}
}

// TestLinkerSetsVersion builds a program that prints Read() with the flags
// scripts/release.sh passes, and checks they win over the build's own.
func TestLinkerSetsVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	bin := filepath.Join(t.TempDir(), "printinfo")
	pkg := "nameservice.dev/nameservice/internal/buildinfo"
	build := exec.Command("go", "build", "-o", bin, "-ldflags",
		"-X "+pkg+".version=v9.8.7 -X "+pkg+".commit=feedface", "./testdata/printinfo")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	if !strings.HasPrefix(s, "v9.8.7 (commit feedface") || !strings.Contains(s, runtime.Version()) {
		t.Errorf("built binary says %q", s)
	}
}
