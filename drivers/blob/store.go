package blob

import (
	"context"
	"errors"
	"io"
	"strings"

	"cloud.google.com/go/storage"
	gblob "gocloud.dev/blob"

	"nameservice.dev/nameservice/internal/objstore"
)

// records is embedded in Driver, which so implements the record
// operations of driver.Driver through objstore.
type records = objstore.Records

// DefaultPageSize is the page size of List when none is asked for.
const DefaultPageSize = objstore.DefaultPageSize

// store is the objstore.Store of a Driver: the bucket's objects under the
// prefix, with generations (GCS) or ETags (Azure) as tags. Its methods are
// not the Driver's own, whose Get and List are those of driver.Driver.
type store struct{ *Driver }

var _ objstore.Store = store{}

// List lists the keys under prefix after startAfter with the bucket's
// List, with each object's generation or ETag. GCS begins at startAfter
// (the query's StartOffset); Azure has no such option, so its listing
// begins at the prefix and skips the keys up to startAfter.
func (s store) List(ctx context.Context, prefix, startAfter string, fn func(key, tag string, size int64) error) error {
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
		if err := fn(key, s.be.listTag(o), o.Size); err != nil {
			return err
		}
	}
}
