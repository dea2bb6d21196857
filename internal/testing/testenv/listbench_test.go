package testenv

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// PeakRSS sees memory touched inside f and not what the process held
// before it; the figures in docs/performance.md depend on both.
func TestPeakRSSCountsWhatFTouches(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("PeakRSS reads Linux's /proc")
	}
	const mb = 1 << 20
	var keep []byte
	peak, before := PeakRSS(t, func() {
		keep = make([]byte, 64*mb)
		for i := 0; i < len(keep); i += 4096 {
			keep[i] = 1
		}
	})
	if before <= 0 || peak-before < 60 {
		t.Fatalf("PeakRSS = %.1f MB peak, %.1f MB before; want the 64 MB f touched on top", peak, before)
	}
	_ = keep[len(keep)-1]
}

func TestStatusKB(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status")
	if err := os.WriteFile(path, []byte("Name:\tns\nVmHWM:\t  51234 kB\nVmRSS:\t 40000 kB\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if kb, err := statusKB(path, "VmHWM"); err != nil || kb != 51234 {
		t.Fatalf("VmHWM = %d, %v; want 51234", kb, err)
	}
	if _, err := statusKB(path, "VmPeak"); err == nil {
		t.Fatal("a missing field gave no error")
	}
	if _, err := statusKB(filepath.Join(t.TempDir(), "none"), "VmHWM"); err == nil {
		t.Fatal("a missing file gave no error")
	}
}
