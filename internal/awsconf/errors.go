package awsconf

import (
	"context"
	"errors"
	"net"

	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/smithy-go"

	"nameservice.dev/nameservice/model"
)

// Code classifies an SDK error: Throttled for throttling that outlasted the
// retries (or the retry quota), NotProvisioned for a missing table or
// bucket, PermissionDenied for refused credentials or permissions,
// Unavailable for anything else (the caller checks its own codes first).
func Code(err error) model.ErrorCode {
	if _, ok := errors.AsType[ratelimit.QuotaExceededError](err); ok {
		return model.Throttled
	}
	switch ErrorCodeOf(err) { // "" without an API error: Unavailable
	case "ThrottlingException", "ProvisionedThroughputExceededException", "RequestLimitExceeded",
		"TransactionInProgressException", "LimitExceededException", "SlowDown", "Throttling", "TooManyRequests":
		return model.Throttled
	case "ResourceNotFoundException", "NoSuchBucket": // DynamoDB's table or index, S3's bucket
		return model.NotProvisioned
	case "AccessDeniedException", "AccessDenied", "AllAccessDisabled", "UnrecognizedClientException",
		"InvalidSignatureException", "SignatureDoesNotMatch", "InvalidAccessKeyId",
		"MissingAuthenticationTokenException", "IncompleteSignatureException", "ExpiredTokenException",
		"ExpiredToken", "InvalidClientTokenId", "InvalidToken",
		"Forbidden": // S3's 403 to a HEAD, which has no body
		return model.PermissionDenied
	}
	return model.Unavailable
}

// ErrorCodeOf returns the service's error code of err, "" when it has none.
func ErrorCodeOf(err error) string {
	if ae, ok := errors.AsType[smithy.APIError](err); ok {
		return ae.ErrorCode()
	}
	return ""
}

// HTTPStatus returns the HTTP status of the answer err came with, 0 when
// none came.
func HTTPStatus(err error) int {
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// MaybeApplied reports whether a failed attempt of a write may nevertheless
// have been applied: no answer came back (the connection broke after the
// request was sent, or the attempt timed out), the service answered with a
// 5xx, or it answered 2xx and the answer's body could not be read or
// decoded (the connection broke in the middle of it: the write was
// processed, and the SDK would otherwise send it again blindly). A 4xx
// answer, a connection that was never established, a refusal by the retry
// quota or a cancellation means the write was not applied.
func MaybeApplied(err error) bool {
	if s := HTTPStatus(err); s != 0 { // 0: the SDK wraps a send failure too
		return s >= 500 || s >= 200 && s < 300
	}
	_, answered := errors.AsType[smithy.APIError](err)
	op, isOp := errors.AsType[*net.OpError](err)
	_, refused := errors.AsType[ratelimit.QuotaExceededError](err)
	return !answered && !(isOp && op.Op == "dial") && !refused && !errors.Is(err, context.Canceled)
}

// Operation returns the API operation err came from, which is also the IAM
// action's name (DynamoDB's UpdateItem, S3's PutObject), or "*" when unknown.
func Operation(err error) string {
	if oe, ok := errors.AsType[*smithy.OperationError](err); ok && oe.OperationName != "" {
		return oe.OperationName
	}
	return "*"
}
