package awsconf

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

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

// ParseParams checks that u carries no credentials (they belong in the AWS
// credential chain) and only the query parameters in known, and returns the
// shared ones. Its error says what is wrong, without the URL: callers wrap
// it with their scheme and the redacted URL.
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
