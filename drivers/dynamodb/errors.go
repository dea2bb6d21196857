package dynamodb

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"nameservice.dev/nameservice/internal/awsconf"
	"nameservice.dev/nameservice/model"
)

// fail wraps an SDK error from operation op (e.g. "update mydb:main head")
// with the driver sentinel that classifies it. The SDK's messages carry the
// operation, HTTP status, request ID and DynamoDB's message, never
// credentials.
func (d *Driver) fail(ctx context.Context, op string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("dynamodb: %s: %w (%v)", op, ctx.Err(), err)
	}
	if unknownOperation(err) {
		return d.unsupported(op, err)
	}
	switch awsconf.Code(err) {
	case model.Throttled:
		return fmt.Errorf("dynamodb: %s: %w: still throttled after the SDK's retries: %w", op, model.ErrThrottled, err)
	case model.NotProvisioned:
		return fmt.Errorf("dynamodb: %s: %w: table %q (or its index %s) does not exist in this region and account, or is not ACTIVE; "+
			"create it with `ns table create` or Provision: %w", op, model.ErrNotProvisioned, d.table, IndexName, err)
	case model.PermissionDenied:
		return fmt.Errorf("dynamodb: %s: %w: DynamoDB refused the credentials or the permission for dynamodb:%s on table %q; "+
			"grant it to the caller's IAM identity (docs/dynamodb.md lists the policy): %w", op, model.ErrPermissionDenied, awsconf.Operation(err), d.table, err)
	}
	if c := awsconf.ErrorCodeOf(err); c == "ValidationException" || c == "SerializationException" {
		return fmt.Errorf("dynamodb: %s: %w: DynamoDB rejected the request: %w", op, model.ErrInvalidArgument, err)
	}
	return fmt.Errorf("dynamodb: %s: %w: %w", op, model.ErrUnavailable, err)
}

// conditionalWriteOptions makes the SDK stop retrying a conditional write
// after an attempt that may have been applied: the driver resolves such
// attempts itself, from what the table holds (see update.resolve), because a
// blind retry could land a second time, on a record created since.
func conditionalWriteOptions(o *dynamodb.Options) {
	o.Retryer = awsconf.SkipIf(o.Retryer, awsconf.MaybeApplied)
}

// newToken returns a random token for write IDs and transaction idempotency.
func newToken() string {
	b := make([]byte, 12)
	rand.Read(b) // never returns an error
	return base64.RawURLEncoding.EncodeToString(b)
}
