package s3etag

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"nameservice.dev/nameservice/internal/objstore"
)

// records is embedded in Driver, which so implements the record
// operations of driver.Driver through objstore.
type records = objstore.Records

// DefaultPageSize is the page size of List when none is asked for.
const DefaultPageSize = objstore.DefaultPageSize

// store returns the objstore.Store of d: the bucket's objects under the
// prefix, with ETags as tags. Conditional writes go through the DynamoDB
// lock in lock mode (see put).
func (d *Driver) store() objstore.Store {
	return objstore.Funcs{GetFunc: d.get, HeadFunc: d.head, PutFunc: d.put, DeleteFunc: d.del,
		ListFunc: d.list, MaybeAppliedFunc: maybeApplied}
}

// list lists the keys under prefix after startAfter with ListObjectsV2
// (every page, until fn stops it).
func (d *Driver) list(ctx context.Context, prefix, startAfter string, fn func(key, etag string, size int64) error) error {
	in := &s3.ListObjectsV2Input{Bucket: &d.cfg.Bucket, Prefix: aws.String(d.key(prefix))}
	if startAfter != "" {
		in.StartAfter = aws.String(d.key(startAfter))
	}
	p := s3.NewListObjectsV2Paginator(d.client, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return d.fail(ctx, "list", prefix, err)
		}
		for _, o := range page.Contents {
			key := strings.TrimPrefix(aws.ToString(o.Key), d.prefix)
			if err := fn(key, aws.ToString(o.ETag), aws.ToInt64(o.Size)); err != nil {
				return err
			}
		}
	}
	return nil
}
