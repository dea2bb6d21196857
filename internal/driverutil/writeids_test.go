package driverutil

import "testing"

func TestWriteIDsHas(t *testing.T) {
	var h WriteIDs
	for _, tag := range []string{"a@1", "ab@2", "c@retract", "d@4"} {
		h.Push(tag)
	}
	if h != (WriteIDs{"d@4", "c@retract", "ab@2"}) {
		t.Fatalf("after four pushes: %q; want the last three, newest first", h)
	}
	for id, want := range map[string]bool{"ab": true, "c": true, "d": true, "a": false, "d@4": false, "": false} {
		if got := h.Has(id); got != want {
			t.Errorf("Has(%q) = %v; want %v", id, got, want)
		}
	}
}

func TestWriteIDsNeverLanded(t *testing.T) {
	for _, c := range []struct {
		name   string
		h      WriteIDs
		wm, v  int64
		strict bool
		want   bool
	}{
		{"watermark below the write's", WriteIDs{"x@3", "y@2", "z@1"}, 3, 4, true, true},
		{"a free slot", WriteIDs{"x@9", "y@8", ""}, 9, 4, true, true},
		{"a write below the write's watermark", WriteIDs{"x@9", "y@8", "z@3"}, 9, 4, true, true},
		{"three writes above it", WriteIDs{"x@9", "y@8", "z@5"}, 9, 4, true, false},
		{"a write at its watermark, strict", WriteIDs{"x@9", "y@8", "z@4"}, 9, 4, true, true},
		{"a write at its watermark, not strict", WriteIDs{"x@9", "y@8", "z@4"}, 9, 4, false, false},
		{"writes without a watermark prove nothing", WriteIDs{"x@9", "y@retract", "old-token"}, 9, 4, true, false},
	} {
		if got := c.h.NeverLanded(c.wm, c.v, c.strict); got != c.want {
			t.Errorf("%s: NeverLanded(%q, %d, %d, %v) = %v; want %v", c.name, c.h, c.wm, c.v, c.strict, got, c.want)
		}
	}
}
