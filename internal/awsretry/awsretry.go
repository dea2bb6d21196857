// Package awsretry adapts the AWS SDK's retryer to conditional writes: a
// jittered backoff in milliseconds rather than the SDK's one-second base,
// and a retryer that leaves alone the attempts that may have been applied,
// so the driver can resolve them by reading.
package awsretry

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"nameservice.dev/nameservice/internal/backoff"
)

// Backoff is full-jitter exponential backoff for the SDK's retryer
// (aws.BackoffDelayer).
type Backoff struct{ Base, Max time.Duration }

// BackoffDelay implements aws.BackoffDelayer.
func (b Backoff) BackoffDelay(attempt int, _ error) (time.Duration, error) {
	return backoff.Jitter(b.Base, b.Max, attempt), nil
}

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
