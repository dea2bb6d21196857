package dynamodb

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/awsretry"
)

var throttleCodes = map[string]bool{
	"ThrottlingException":                    true,
	"ProvisionedThroughputExceededException": true,
	"RequestLimitExceeded":                   true,
	"TransactionInProgressException":         true,
	"LimitExceededException":                 true,
}

var credentialCodes = map[string]bool{
	"AccessDeniedException":               true,
	"UnrecognizedClientException":         true,
	"InvalidSignatureException":           true,
	"MissingAuthenticationTokenException": true,
	"IncompleteSignatureException":        true,
	"ExpiredTokenException":               true,
	"InvalidClientTokenId":                true,
}

// fail wraps an SDK error from operation op (e.g. "update mydb:main head")
// with the driver sentinel that classifies it. The SDK's messages carry the
// operation, HTTP status, request ID and DynamoDB's message, never
// credentials.
func (d *Driver) fail(ctx context.Context, op string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("dynamodb: %s: %w (%v)", op, ctx.Err(), err)
	}
	var q ratelimit.QuotaExceededError
	if errors.As(err, &q) {
		return fmt.Errorf("dynamodb: %s: %w: %w", op, driver.ErrThrottled, err)
	}
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		return fmt.Errorf("dynamodb: %s: %w: %w", op, driver.ErrUnavailable, err)
	}
	code := ae.ErrorCode()
	switch {
	case code == "ResourceNotFoundException":
		return fmt.Errorf("dynamodb: %s: %w: table %q (or its index %s) does not exist in this region and account, or is not ACTIVE; "+
			"create it with `ns table create` or EnsureTable: %w", op, driver.ErrUnavailable, d.table, IndexName, err)
	case throttleCodes[code]:
		return fmt.Errorf("dynamodb: %s: %w: still throttled after the SDK's retries: %w", op, driver.ErrThrottled, err)
	case code == "ValidationException" || code == "SerializationException":
		return fmt.Errorf("dynamodb: %s: %w: DynamoDB rejected the request: %w", op, driver.ErrInvalidArgument, err)
	case credentialCodes[code]:
		return fmt.Errorf("dynamodb: %s: %w: DynamoDB refused the credentials or permissions: %w", op, driver.ErrUnavailable, err)
	}
	return fmt.Errorf("dynamodb: %s: %w: %w", op, driver.ErrUnavailable, err)
}

// maybeApplied reports whether a failed attempt of a write may nevertheless
// have been applied: no answer came back (the connection broke after the
// request was sent, or the attempt timed out), or DynamoDB answered with a 5xx.
// A 4xx answer, or a connection that was never established, means the write
// was not applied.
func maybeApplied(err error) bool {
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) && re.HTTPStatusCode() != 0 { // 0: the SDK wraps a send failure too
		return re.HTTPStatusCode() >= 500
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return false
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return false
	}
	var q ratelimit.QuotaExceededError
	if errors.As(err, &q) {
		return false
	}
	return !errors.Is(err, context.Canceled)
}

// conditionalWriteOptions makes the SDK stop retrying a conditional
// UpdateItem after an attempt that may have been applied: the driver resolves
// such attempts itself (resend, then look for its write ID), because a blind
// retry after a backoff would find the item changed and could not tell its
// own write from a later one.
func conditionalWriteOptions(o *dynamodb.Options) {
	o.Retryer = awsretry.SkipIf(o.Retryer, maybeApplied)
}

// resolvingWriteOptions is used while resolving an ambiguous write: the SDK
// makes one attempt and the driver decides what to do next.
func resolvingWriteOptions(o *dynamodb.Options) {
	o.Retryer = awsretry.SkipIf(o.Retryer, maybeApplied)
	o.RetryMaxAttempts = 1
}

// refused reports whether DynamoDB refused a request for load (throttling,
// a conflicting transaction): it was not applied and may be sent again.
func refused(err error) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && (throttleCodes[ae.ErrorCode()] || ae.ErrorCode() == "TransactionConflictException")
}

// newToken returns a random token for write IDs and transaction idempotency.
func newToken() string {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		// crypto/rand does not fail on supported platforms; a time-based
		// token still distinguishes writes.
		return fmt.Sprintf("t%x", time.Now().UnixNano())
	}
	return base64.RawURLEncoding.EncodeToString(b)
}
