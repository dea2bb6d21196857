package backoff

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestJitterStaysUnderTheCeiling(t *testing.T) {
	for attempt := range 40 {
		ceiling := min(10*time.Millisecond<<min(attempt, 30), time.Second)
		for range 50 {
			if d := Jitter(10*time.Millisecond, time.Second, attempt); d < 0 || d > ceiling {
				t.Fatalf("Jitter(attempt %d) = %v, want within [0, %v]", attempt, d, ceiling)
			}
		}
	}
	if d := Jitter(0, 0, 3); d != 0 {
		t.Fatalf("Jitter with a zero ceiling = %v", d)
	}
}

func TestSleepReturnsWhenCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) || time.Since(start) > time.Second {
		t.Fatalf("Sleep on a canceled context = %v after %v", err, time.Since(start))
	}
	if err := Sleep(context.Background(), time.Millisecond); err != nil {
		t.Fatal(err)
	}
}
