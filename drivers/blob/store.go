package blob

import (
	"context"
	"errors"
	"io"
	"strings"

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

// list lists the keys under prefix with the bucket's List. gocloud's
// listing gives no generation or ETag, so every tag is "".
func (d *Driver) list(ctx context.Context, prefix string, fn func(key, tag string, size int64) error) error {
	it := d.bucket.List(&gblob.ListOptions{Prefix: d.key(prefix)})
	for {
		o, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return d.fail(ctx, "list", prefix, err)
		}
		if err := fn(strings.TrimPrefix(o.Key, d.prefix), "", o.Size); err != nil {
			return err
		}
	}
}
