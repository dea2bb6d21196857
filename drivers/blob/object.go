package blob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"cloud.google.com/go/storage"
	gblob "gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"nameservice.dev/nameservice/internal/objstore"
	"nameservice.dev/nameservice/model"
)

// records is embedded in Driver, which so implements the record
// operations of driver.Driver through objstore.
type records = objstore.Records

// store is the objstore.Store of a Driver, with generations (GCS) or ETags
// (Azure) as tags; its methods are not the Driver's own.
type store struct{ *Driver }

// List lists the keys under prefix after startAfter, with each object's
// generation or ETag. GCS begins at startAfter (StartOffset); Azure lists
// from the prefix, and the keys up to startAfter are skipped.
func (s store) List(ctx context.Context, prefix, startAfter string, fn func(objstore.Entry) error) error {
	opts := &gblob.ListOptions{Prefix: s.key(prefix)}
	if startAfter != "" {
		opts.BeforeList = func(as func(any) bool) error {
			var q *storage.Query
			if as(&q) {
				q.StartOffset = s.key(startAfter)
			}
			return nil
		}
	}
	it := s.bucket.List(opts)
	for {
		o, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return s.fail(ctx, "list", prefix, err)
		}
		key := strings.TrimPrefix(o.Key, s.prefix)
		if key <= startAfter {
			continue
		}
		if err := fn(objstore.Entry{Key: key, Tag: s.be.tag(o.As), Size: o.Size}); err != nil {
			return err
		}
	}
}

// Get implements objstore.Store.
func (s store) Get(ctx context.Context, key string) ([]byte, string, error) {
	r, err := s.bucket.NewReader(ctx, s.key(key), nil)
	if err != nil {
		if absent(err) {
			return nil, "", nil
		}
		return nil, "", s.fail(ctx, "read", key, err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, "", s.fail(ctx, "read", key, err)
	}
	if len(data) == 0 {
		return nil, "", nil
	}
	tag := s.be.tag(r.As)
	if tag == "" {
		return nil, "", fmt.Errorf("%s: read %s: %w: the service returned no generation or ETag", s.be.name(), key, model.ErrUnsupported)
	}
	return data, tag, nil
}

// Head implements objstore.Store.
func (s store) Head(ctx context.Context, key string) (string, error) {
	a, err := s.bucket.Attributes(ctx, s.key(key))
	if err != nil {
		if absent(err) {
			return "", nil
		}
		return "", s.fail(ctx, "stat", key, err)
	}
	if a.Size == 0 {
		return "", nil
	}
	return s.be.tag(a.As), nil
}

// Put implements objstore.Store with one upload.
func (s store) Put(ctx context.Context, key string, data []byte, pc objstore.Precondition) (string, error) {
	wctx, opts, tag, err := s.be.writeOptions(ctx, pc, len(data))
	if err != nil {
		return "", fmt.Errorf("%s: write %s: %w: %w", s.be.name(), key, model.ErrInternal, err)
	}
	if err := s.bucket.Upload(wctx, s.key(key), bytes.NewReader(data), opts); err != nil {
		return "", s.condFail(ctx, "write", key, pc, err)
	}
	t := tag()
	if t == "" {
		return "", fmt.Errorf("%s: write %s: %w: the service returned no generation or ETag", s.be.name(), key, model.ErrUnsupported)
	}
	return t, nil
}

// Delete implements objstore.Store; an unconditional delete (only the
// probe's, of its own object) may be retried.
func (s store) Delete(ctx context.Context, key string, pc objstore.Precondition) error {
	if pc.Tag == "" {
		err := s.bucket.Delete(ctx, s.key(key))
		if err == nil || absent(err) {
			return nil
		}
		return s.fail(ctx, "remove", key, err)
	}
	if err := s.be.deleteIf(ctx, s.key(key), pc.Tag); err != nil {
		return s.condFail(ctx, "remove", key, pc, err)
	}
	return nil
}

// condFail classifies the error of a conditional request.
func (d *Driver) condFail(ctx context.Context, op, key string, pc objstore.Precondition, err error) error {
	switch {
	case errors.Is(err, objstore.ErrPrecondition) || pc.Conditional() && preconditionFailed(err):
		return fmt.Errorf("%s: %s %s: %w", d.be.name(), op, key, objstore.ErrPrecondition)
	case pc.Tag != "" && absent(err):
		return fmt.Errorf("%s: %s %s: %w", d.be.name(), op, key, errMissing)
	}
	return d.fail(ctx, op, key, err)
}

// fail wraps a service error of op on key with the driver sentinel that
// classifies it (the SDKs' messages never carry credentials).
func (d *Driver) fail(ctx context.Context, op, key string, err error) error {
	name, err := d.be.name(), brief(err)
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %s %s: %w (%v)", name, op, key, ctx.Err(), err)
	}
	switch {
	case throttled(err) || gcerrors.Code(err) == gcerrors.ResourceExhausted:
		return fmt.Errorf("%s: %s %s: %w: %w", name, op, key, model.ErrThrottled, err)
	case gcerrors.Code(err) == gcerrors.NotFound || notFound(err):
		return fmt.Errorf("%s: %s %s: %w: the bucket or container does not exist; create it or fix the URL: %w", name, op, key, model.ErrNotProvisioned, err)
	case denied(err):
		return fmt.Errorf("%s: %s %s: %w: the service refused the credentials or the permission to %s objects; "+
			"grant the caller read, write and delete on the bucket or container (docs/gcs.md, docs/azure.md): %w", name, op, key, model.ErrPermissionDenied, op, err)
	}
	return fmt.Errorf("%s: %s %s: %w: %w", name, op, key, model.ErrUnavailable, err)
}

// MaybeApplied implements objstore.Store: no answer came back, or a 5xx.
func (store) MaybeApplied(err error) bool {
	if s := httpStatus(err); s != 0 {
		return s >= 500 && !throttled(err)
	}
	if op, ok := errors.AsType[*net.OpError](err); ok && op.Op == "dial" {
		return false
	}
	return !errors.Is(err, context.Canceled) && !errors.Is(err, objstore.ErrPrecondition) && !errors.Is(err, errMissing) &&
		!errors.Is(err, model.ErrInternal) && !errors.Is(err, model.ErrUnsupported)
}
