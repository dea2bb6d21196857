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

	"nameservice.dev/nameservice/internal/awsconf"
	"nameservice.dev/nameservice/internal/objstore"
	"nameservice.dev/nameservice/model"
)

// records is embedded in Driver, which so implements the record
// operations of driver.Driver through objstore.
type records = objstore.Records

// store is the objstore.Store of a Driver (in lock mode writing through
// the DynamoDB lock); its methods are not the Driver's own.
type store struct{ *Driver }

// MaybeApplied implements objstore.Store: no answer came back, or a 5xx.
func (store) MaybeApplied(err error) bool {
	return awsconf.MaybeApplied(err) && !errors.Is(err, objstore.ErrPrecondition) && !errors.Is(err, objstore.ErrMissing)
}

// List lists the keys under prefix after startAfter with ListObjectsV2.
func (s store) List(ctx context.Context, prefix, startAfter string, fn func(objstore.Entry) error) error {
	in := &s3.ListObjectsV2Input{Bucket: &s.cfg.Bucket, Prefix: aws.String(s.key(prefix))}
	if startAfter != "" {
		in.StartAfter = aws.String(s.key(startAfter))
	}
	p := s3.NewListObjectsV2Paginator(s.client, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return s.fail(ctx, "list", prefix, err)
		}
		for _, o := range page.Contents {
			key := strings.TrimPrefix(aws.ToString(o.Key), s.prefix)
			if err := fn(objstore.Entry{Key: key, Tag: aws.ToString(o.ETag), Size: aws.ToInt64(o.Size)}); err != nil {
				return err
			}
		}
	}
	return nil
}

func quote(etag string) string { return `"` + etag + `"` }

// Get implements objstore.Store.
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
	return data, objstore.NormTag(aws.ToString(out.ETag)), nil
}

// Head implements objstore.Store.
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
	return objstore.NormTag(aws.ToString(out.ETag)), nil
}

// Put implements objstore.Store; in lock mode the precondition is checked
// under the DynamoDB lock and the write is unconditional.
func (s store) Put(ctx context.Context, key string, data []byte, pc objstore.Precondition) (string, error) {
	if s.lock != nil && pc.Conditional() {
		var etag string
		err := s.lock.conditional(ctx, s.Driver, key, pc, func(ctx context.Context) (err error) {
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
	return objstore.NormTag(aws.ToString(out.ETag)), nil
}

// Delete implements objstore.Store, as Put does.
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
	switch status := awsconf.HTTPStatus(err); {
	case status == 412 || status == 409 && pc.Conditional() && awsconf.ErrorCodeOf(err) != codeIsDirectory:
		return fmt.Errorf("s3: %s %s: %w", op, key, objstore.ErrPrecondition)
	case status == 404 && pc.Tag != "":
		return fmt.Errorf("s3: %s %s: %w", op, key, objstore.ErrMissing)
	}
	return d.fail(ctx, op, key, err)
}

// codeIsDirectory is the 409 a posix-backed server (versitygw) answers when
// it could not place the object's file: not a failed condition.
const codeIsDirectory = "ExistingObjectIsDirectory"

func notFound(err error) bool {
	code := awsconf.ErrorCodeOf(err)
	return code == "NoSuchKey" || code == "NotFound" || awsconf.HTTPStatus(err) == 404
}

// fail wraps an SDK error of op on key with the driver sentinel that
// classifies it (the SDK's messages never carry credentials).
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

// noRetryIfMaybeApplied stops the SDK from retrying a write that may have
// been applied: the retry would meet the write's own new ETag with a 412.
func noRetryIfMaybeApplied(o *s3.Options) {
	o.Retryer = awsconf.SkipIf(o.Retryer, store{}.MaybeApplied)
}
