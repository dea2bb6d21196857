package driverutil

import (
	"context"
	"math/rand/v2"
	"time"
)

// Jitter returns a "full jitter" delay for the attempt-th retry: uniform in
// [0, min(max, base·2^attempt)]. Spreading retries uniformly keeps clients
// that failed together from retrying together.
func Jitter(base, max time.Duration, attempt int) time.Duration {
	ceiling := max
	if attempt < 30 && base<<attempt < max {
		ceiling = base << attempt
	}
	if ceiling <= 0 {
		return 0
	}
	return rand.N(ceiling + 1)
}

// Sleep waits d, or returns ctx's error as soon as ctx is done.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
