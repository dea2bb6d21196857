package blob

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"cloud.google.com/go/storage"
	gblob "gocloud.dev/blob"

	"nameservice.dev/nameservice/internal/objstore"
)

// gcs is the Google Cloud Storage backend; a tag is a generation in decimal.
type gcs struct {
	bucket *gblob.Bucket
}

func (*gcs) name() string { return SchemeGCS }

// tag is the generation of a read's object, or of a listed or statted one
// (a listing may give none: 0).
func (*gcs) tag(as func(any) bool) string {
	var sr *storage.Reader
	var oa storage.ObjectAttrs
	switch {
	case as(&sr):
		return strconv.FormatInt(sr.Attrs.Generation, 10)
	case as(&oa) && oa.Generation != 0:
		return strconv.FormatInt(oa.Generation, 10)
	}
	return ""
}

func generation(tag string) (int64, error) {
	g, err := strconv.ParseInt(tag, 10, 64)
	if err != nil || g <= 0 {
		return 0, fmt.Errorf("gs: generation %q is not a positive integer", tag)
	}
	return g, nil
}

// writeOptions sets ifGenerationMatch on the object handle gocloud writes
// through (IfNotExist is gocloud's ifGenerationMatch=0), turns the SDK's
// retries off for a conditional write (a retry after an attempt that
// landed would meet its own generation with a 412), and keeps the writer
// for the new generation. ChunkSize 0 makes the upload one request.
func (g *gcs) writeOptions(ctx context.Context, pc objstore.Precondition, _ int) (context.Context, *gblob.WriterOptions, func() string, error) {
	var gen int64
	if pc.Tag != "" {
		var err error
		if gen, err = generation(pc.Tag); err != nil {
			return nil, nil, nil, err
		}
	}
	var w *storage.Writer
	before := func(as func(any) bool) error {
		var h **storage.ObjectHandle
		if !as(&h) {
			return errors.New("gs: BeforeWrite gave no object handle")
		}
		if gen != 0 {
			*h = (*h).If(storage.Conditions{GenerationMatch: gen})
		}
		if pc.Conditional() {
			*h = (*h).Retryer(storage.WithPolicy(storage.RetryNever))
		}
		if !as(&w) {
			return errors.New("gs: BeforeWrite gave no writer")
		}
		w.ChunkSize = 0
		return nil
	}
	opts := &gblob.WriterOptions{ContentType: jsonType, IfNotExist: pc.Absent, BeforeWrite: before}
	tag := func() string {
		if w == nil || w.Attrs() == nil {
			return ""
		}
		return strconv.FormatInt(w.Attrs().Generation, 10)
	}
	return ctx, opts, tag, nil
}

// errHandle stops a read once its BeforeRead hook has the object handle.
var errHandle = errors.New("object handle taken")

// handle returns the object handle gocloud would use for key (bucket,
// client and key escaping included) without a request, by a read stopped
// in BeforeRead.
func (g *gcs) handle(ctx context.Context, key string) (*storage.ObjectHandle, error) {
	var h *storage.ObjectHandle
	stop := func(as func(any) bool) error {
		var p **storage.ObjectHandle
		if as(&p) {
			h = *p
		}
		return errHandle
	}
	r, err := g.bucket.NewReader(ctx, key, &gblob.ReaderOptions{BeforeRead: stop})
	if err == nil {
		_ = r.Close()
	}
	if h == nil {
		return nil, fmt.Errorf("gs: no object handle for %s: %w", key, err)
	}
	return h, nil
}

// deleteIf deletes generation tag of key: naming the generation is what
// fake-gcs-server and GCS both enforce (404 when it is not the object's);
// the first ignores ifGenerationMatch on delete.
func (g *gcs) deleteIf(ctx context.Context, key, tag string) error {
	gen, err := generation(tag)
	if err != nil {
		return err
	}
	h, err := g.handle(ctx, key)
	if err != nil {
		return err
	}
	h = h.Generation(gen).If(storage.Conditions{GenerationMatch: gen}).Retryer(storage.WithPolicy(storage.RetryNever))
	err = h.Delete(ctx)
	if notFound(err) {
		// That generation is gone: replaced or deleted. A re-read tells.
		return fmt.Errorf("%w: %w", objstore.ErrPrecondition, err)
	}
	return err
}
