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

// store is the objstore.Store of a Driver: the bucket's objects under the
// prefix, with ETags as tags. Conditional writes go through the DynamoDB
// lock in lock mode (see Put). Its methods are not the Driver's own, whose
// Get and List are those of driver.Driver.
type store struct{ *Driver }

var _ objstore.Store = store{}

// MaybeApplied implements objstore.Store.
func (store) MaybeApplied(err error) bool { return maybeApplied(err) }

// List lists the keys under prefix after startAfter with ListObjectsV2
// (every page, until fn stops it).
func (s store) List(ctx context.Context, prefix, startAfter string, fn func(key, etag string, size int64) error) error {
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
			if err := fn(key, aws.ToString(o.ETag), aws.ToInt64(o.Size)); err != nil {
				return err
			}
		}
	}
	return nil
}
