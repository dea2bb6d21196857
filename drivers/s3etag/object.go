package s3etag

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"nameservice.dev/nameservice/internal/awsconf"
	"nameservice.dev/nameservice/internal/objstore"
	"nameservice.dev/nameservice/model"
)

// Outcomes of a conditional request, beside success and other errors.
var (
	// errPrecondition: the precondition failed (412), nothing was written.
	errPrecondition = objstore.Sentinel("precondition failed", objstore.ErrPrecondition)
	// errMissing: If-Match on a key that does not exist (404).
	errMissing = objstore.Sentinel("no such key", objstore.ErrMissing)
)

// normETag returns an ETag without quotes or weak prefix, so that "abc",
// abc and W/"abc" compare equal.
func normETag(e string) string {
	e = strings.TrimPrefix(strings.TrimSpace(e), "W/")
	return strings.Trim(e, `"`)
}

func quote(etag string) string { return `"` + etag + `"` }

// Get reads key and returns its bytes and normalised ETag; nil when it is
// absent (missing or zero-length, a create that never finished, as in the
// filesystem driver).
func (s store) Get(ctx context.Context, key string) ([]byte, string, error) {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.cfg.Bucket, Key: aws.String(s.key(key))})
	if err != nil {
		if notFound(err) {
			return nil, "", nil
		}
		return nil, "", s.fail(ctx, "read", key, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, "", s.fail(ctx, "read", key, err)
	}
	if len(data) == 0 {
		return nil, "", nil
	}
	return data, normETag(aws.ToString(out.ETag)), nil
}

// Head returns key's ETag, "" when it is absent.
func (s store) Head(ctx context.Context, key string) (string, error) {
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.cfg.Bucket, Key: aws.String(s.key(key))})
	if err != nil {
		if notFound(err) {
			return "", nil
		}
		return "", s.fail(ctx, "head", key, err)
	}
	if aws.ToInt64(out.ContentLength) == 0 {
		return "", nil
	}
	return normETag(aws.ToString(out.ETag)), nil
}

// Put writes data to key under pc and returns the new ETag. A failed
// precondition is errPrecondition, If-Match on a missing key errMissing.
// In lock mode the precondition is checked under the DynamoDB lock and the
// write is unconditional.
func (s store) Put(ctx context.Context, key string, data []byte, pc objstore.Precondition) (string, error) {
	if s.lock != nil && pc.Conditional() {
		var etag string
		err := s.lock.conditional(ctx, s.Driver, key, pc, func(ctx context.Context) error {
			var err error
			etag, err = s.rawPut(ctx, key, data, objstore.Precondition{})
			return err
		})
		return etag, err
	}
	return s.rawPut(ctx, key, data, pc)
}

func (d *Driver) rawPut(ctx context.Context, key string, data []byte, pc objstore.Precondition) (string, error) {
	in := &s3.PutObjectInput{
		Bucket: &d.cfg.Bucket, Key: aws.String(d.key(key)), Body: bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))), ContentType: aws.String("application/json"),
	}
	if pc.Absent {
		in.IfNoneMatch = aws.String("*")
	} else if pc.Tag != "" {
		in.IfMatch = aws.String(quote(pc.Tag))
	}
	out, err := d.client.PutObject(ctx, in, noRetryIfMaybeApplied)
	if err != nil {
		return "", d.condFail(ctx, "write", key, pc, err)
	}
	return normETag(aws.ToString(out.ETag)), nil
}

// Delete removes key under pc with one request (see objstore.Store).
// Removing a missing key unconditionally is not an error.
func (s store) Delete(ctx context.Context, key string, pc objstore.Precondition) error {
	if s.lock != nil && pc.Conditional() {
		return s.lock.conditional(ctx, s.Driver, key, pc, func(ctx context.Context) error {
			return s.rawDel(ctx, key, objstore.Precondition{})
		})
	}
	return s.rawDel(ctx, key, pc)
}

func (d *Driver) rawDel(ctx context.Context, key string, pc objstore.Precondition) error {
	in := &s3.DeleteObjectInput{Bucket: &d.cfg.Bucket, Key: aws.String(d.key(key))}
	if pc.Tag != "" {
		in.IfMatch = aws.String(quote(pc.Tag))
	}
	if _, err := d.client.DeleteObject(ctx, in, noRetryIfMaybeApplied); err != nil {
		if !pc.Conditional() && notFound(err) {
			return nil
		}
		return d.condFail(ctx, "remove", key, pc, err)
	}
	return nil
}

// condFail classifies the error of a conditional request.
func (d *Driver) condFail(ctx context.Context, op, key string, pc objstore.Precondition, err error) error {
	switch status := httpStatus(err); {
	case status == 412 || status == 409 && pc.Conditional() && awsconf.ErrorCodeOf(err) != codeIsDirectory:
		return fmt.Errorf("s3: %s %s: %w", op, key, errPrecondition)
	case status == 404 && pc.Tag != "":
		return fmt.Errorf("s3: %s %s: %w", op, key, errMissing)
	}
	return d.fail(ctx, op, key, err)
}

// codeIsDirectory is the 409 a posix-backed server (versitygw) answers when
// it could not place the object's file: not a failed condition.
const codeIsDirectory = "ExistingObjectIsDirectory"

func httpStatus(err error) int { return awsconf.HTTPStatus(err) }

func notFound(err error) bool {
	var ae smithy.APIError
	if errors.As(err, &ae) && (ae.ErrorCode() == "NoSuchKey" || ae.ErrorCode() == "NotFound") {
		return true
	}
	return httpStatus(err) == 404
}

// fail wraps an SDK error of op on key with the driver sentinel that
// classifies it. The SDK's messages carry the operation, status, request ID
// and S3's message, never credentials.
func (d *Driver) fail(ctx context.Context, op, key string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("s3: %s %s: %w (%v)", op, key, ctx.Err(), err)
	}
	switch awsconf.Code(err) {
	case model.Throttled:
		return fmt.Errorf("s3: %s %s: %w: still throttled after the SDK's retries: %w", op, key, model.ErrThrottled, err)
	case model.NotProvisioned:
		return fmt.Errorf("s3: %s %s: %w: bucket %q does not exist; create it (aws s3 mb s3://%s) or fix the URL: %w",
			op, key, model.ErrNotProvisioned, d.cfg.Bucket, d.cfg.Bucket, err)
	case model.PermissionDenied:
		return fmt.Errorf("s3: %s %s: %w: S3 refused the credentials or the permission for s3:%s on bucket %q; "+
			"grant it to the caller's IAM identity (docs/s3.md lists the policy): %w", op, key, model.ErrPermissionDenied, awsconf.Operation(err), d.cfg.Bucket, err)
	}
	return fmt.Errorf("s3: %s %s: %w: %w", op, key, model.ErrUnavailable, err)
}

// maybeApplied reports whether a failed write may nevertheless have been
// applied: no answer came back (the connection broke after the request was
// sent, or the attempt timed out), or S3 answered with a 5xx.
func maybeApplied(err error) bool {
	return awsconf.MaybeApplied(err) && !errors.Is(err, errPrecondition) && !errors.Is(err, errMissing)
}

// noRetryIfMaybeApplied stops the SDK from retrying a conditional write
// after an attempt that may have been applied: the retry would meet the
// write's own new ETag with a 412, and only a re-read can tell (see
// resolve).
func noRetryIfMaybeApplied(o *s3.Options) {
	o.Retryer = awsconf.SkipIf(o.Retryer, maybeApplied)
}
