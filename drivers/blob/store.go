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

// store returns the objstore.Store of d: the bucket's objects under the
// prefix, with generations (GCS) or ETags (Azure) as tags.
func (d *Driver) store() objstore.Store {
	return objstore.Funcs{GetFunc: d.get, HeadFunc: d.head, PutFunc: d.put, DeleteFunc: d.del,
		ListFunc: d.list, MaybeAppliedFunc: maybeApplied}
}

// list lists the keys under prefix after startAfter with the bucket's
// List, with each object's generation or ETag. GCS begins at startAfter
// (the query's StartOffset); Azure has no such option, so its listing
// begins at the prefix and skips the keys up to startAfter.
func (d *Driver) list(ctx context.Context, prefix, startAfter string, fn func(key, tag string, size int64) error) error {
	opts := &gblob.ListOptions{Prefix: d.key(prefix)}
	if startAfter != "" {
		opts.BeforeList = func(as func(any) bool) error {
			var q *storage.Query
			if as(&q) {
				q.StartOffset = d.key(startAfter)
			}
			return nil
		}
	}
	it := d.bucket.List(opts)
	for {
		o, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return d.fail(ctx, "list", prefix, err)
		}
		key := strings.TrimPrefix(o.Key, d.prefix)
		if key <= startAfter {
			continue
		}
		if err := fn(key, d.be.listTag(o), o.Size); err != nil {
			return err
		}
	}
}
