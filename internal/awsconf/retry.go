package awsconf

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"

	"nameservice.dev/nameservice/internal/driverutil"
)

// SkipIf returns r, except that errors for which skip reports true are not
// retried.
func SkipIf(r aws.Retryer, skip func(error) bool) aws.Retryer {
	return skipRetryer{Retryer: r, skip: skip}
}

type skipRetryer struct {
	aws.Retryer
	skip func(error) bool
}

func (r skipRetryer) IsErrorRetryable(err error) bool {
	return !r.skip(err) && r.Retryer.IsErrorRetryable(err)
}

// GetAttemptToken keeps the wrapped retryer's per-attempt accounting.
func (r skipRetryer) GetAttemptToken(ctx context.Context) (func(error) error, error) {
	if v2, ok := r.Retryer.(aws.RetryerV2); ok {
		return v2.GetAttemptToken(ctx)
	}
	return r.GetInitialToken(), nil
}

// DefaultMaxAttempts is how many times the drivers' SDK clients send a
// request at most.
const DefaultMaxAttempts = 5

// BaseBackoff is the drivers' first backoff between two attempts.
const BaseBackoff = 25 * time.Millisecond

// NewRetryer returns the SDK's standard retryer with maxAttempts attempts,
// limiter (nil: none — the SDK's client-side token bucket fails healthy
// requests under load with "retry quota exceeded"), full-jitter backoff
// from base up to a second, and the error codes in also retried too (codes
// for which the service refused the request and wrote nothing).
func NewRetryer(maxAttempts int, limiter retry.RateLimiter, base time.Duration, also ...string) aws.Retryer {
	if limiter == nil {
		limiter = ratelimit.None
	}
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = maxAttempts
		o.RateLimiter = limiter
		o.Backoff = retry.BackoffDelayerFunc(func(attempt int, _ error) (time.Duration, error) {
			return driverutil.Jitter(base, time.Second, attempt), nil
		})
		codes := map[string]struct{}{}
		for _, c := range also {
			codes[c] = struct{}{}
		}
		o.Retryables = append(o.Retryables, retry.RetryableErrorCode{Codes: codes})
	})
}
