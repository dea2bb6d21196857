package driverutil

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
	done := make(chan error, 1)
	go func() { done <- Sleep(ctx, time.Hour) }()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Sleep on a canceled context = %v", err)
		}
	case <-time.After(time.Minute): // an hour's sleep, not a loaded machine
		t.Fatal("Sleep on a canceled context still sleeps after a minute")
	}
	if err := Sleep(context.Background(), time.Millisecond); err != nil {
		t.Fatal(err)
	}
}
