package driverutil

import (
	"context"
	"crypto/rand"
	"math/big"
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
	n, err := rand.Int(rand.Reader, big.NewInt(int64(ceiling)+1))
	if err != nil {
		return ceiling / 2
	}
	return time.Duration(n.Int64())
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
