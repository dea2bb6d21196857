package awsconf

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"

	"nameservice.dev/nameservice/internal/driverutil"
)

// Params are the URL parameters every AWS-backed URL shares.
type Params struct {
	Region      string
	Endpoint    string
	Profile     string
	Timeout     time.Duration // 0 when absent
	MaxAttempts int           // 0 when absent
}

// ParamNames names the parameters of Params.
var ParamNames = []string{"region", "endpoint", "profile", "timeout", "max_attempts"}

// Known returns ParamNames and extra, the parameters a URL may carry.
func Known(extra ...string) []string { return slices.Concat(ParamNames, extra) }

// ParseParams checks that u carries no credentials and only the query
// parameters in known, and returns the shared ones. Its error does not
// repeat the URL: callers add their scheme and the redacted URL.
func ParseParams(u *url.URL, known []string) (Params, error) {
	if u.User != nil {
		return Params{}, errors.New("credentials do not belong in the URL; use the AWS credential chain")
	}
	q := u.Query()
	for k := range q {
		if !slices.Contains(known, k) {
			return Params{}, fmt.Errorf("unknown parameter %q (known: %s)", k, strings.Join(known, ", "))
		}
	}
	p := Params{Region: q.Get("region"), Endpoint: q.Get("endpoint"), Profile: q.Get("profile")}
	if err := CheckEndpoint(p.Endpoint); err != nil {
		return Params{}, err
	}
	if s := q.Get("timeout"); s != "" {
		t, err := time.ParseDuration(s)
		if err != nil || t <= 0 {
			return Params{}, fmt.Errorf("timeout %q is not a positive duration such as 5s", s)
		}
		p.Timeout = t
	}
	if s := q.Get("max_attempts"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return Params{}, fmt.Errorf("max_attempts %q is not a positive integer", s)
		}
		p.MaxAttempts = n
	}
	return p, nil
}

// HTTPClient returns the SDK's buildable HTTP client with each request
// (one attempt) bounded by timeout, or by def when timeout is 0.
func HTTPClient(timeout, def time.Duration) *awshttp.BuildableClient {
	return awshttp.NewBuildableClient().WithTimeout(driverutil.Positive(timeout, def))
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

// DefaultMaxAttempts is the drivers' default attempts per request.
const DefaultMaxAttempts = 5

// BaseBackoff is the drivers' first backoff between two attempts.
const BaseBackoff = 25 * time.Millisecond

// NewRetryer returns the SDK's standard retryer with maxAttempts attempts,
// limiter (nil: none — the SDK's token bucket fails healthy requests under
// load), full-jitter backoff from base up to a second, and the error codes
// in also retried (refusals that wrote nothing).
func NewRetryer(maxAttempts int, limiter retry.RateLimiter, base time.Duration, also ...string) aws.Retryer {
	if limiter == nil {
		limiter = ratelimit.None
	}
	return retry.AddWithErrorCodes(retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = maxAttempts
		o.RateLimiter = limiter
		o.Backoff = retry.BackoffDelayerFunc(func(attempt int, _ error) (time.Duration, error) {
			return driverutil.Jitter(base, time.Second, attempt), nil
		})
	}), also...)
}
