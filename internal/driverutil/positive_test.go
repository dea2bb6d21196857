package driverutil

import (
	"testing"
	"time"
)

func TestPositive(t *testing.T) {
	for _, c := range []struct{ v, want time.Duration }{{5 * time.Second, 5 * time.Second}, {0, time.Minute}, {-1, time.Minute}} {
		if got := Positive(c.v, time.Minute); got != c.want {
			t.Errorf("Positive(%v, 1m) = %v, want %v", c.v, got, c.want)
		}
	}
	if got := Positive(-3, 7); got != 7 {
		t.Errorf("Positive(-3, 7) = %d, want 7", got)
	}
	if got := Positive(2.5, 1.0); got != 2.5 {
		t.Errorf("Positive(2.5, 1) = %v, want 2.5", got)
	}
}
