package s3etag_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"golang.org/x/sync/errgroup"

	"nameservice.dev/nameservice/drivers/s3etag"
	"nameservice.dev/nameservice/jsonld"
)

// TestPutBesideDeleteOfFoldersLastObject puts and deletes objects of one
// folder from four writers at once, as records of one database are created
// and purged. versitygw's posix backend removes a folder with its last
// object, and a put that made the folder a moment before then fails with
// 409 ExistingObjectIsDirectory (about one put in fifty here, each writer
// alone in its key): the client NewClient builds retries that answer, since
// nothing was written.
func TestPutBesideDeleteOfFoldersLastObject(t *testing.T) {
	endpoint, bucket := newBucket(t)
	client, err := s3etag.NewClient(context.Background(), baseConfig(endpoint, bucket, jsonld.LayoutB))
	if err != nil {
		t.Fatal(err)
	}
	var g errgroup.Group
	for w := range 4 {
		key := fmt.Sprintf("ns@v2/db/writer%d.json", w)
		g.Go(func() error {
			for i := range 100 {
				if _, err := client.PutObject(context.Background(), &s3.PutObjectInput{
					Bucket: &bucket, Key: &key, Body: strings.NewReader("{}"),
				}); err != nil {
					return fmt.Errorf("put %d of %s: %w", i, key, err)
				}
				if _, err := client.DeleteObject(context.Background(), &s3.DeleteObjectInput{
					Bucket: &bucket, Key: aws.String(key),
				}); err != nil {
					return fmt.Errorf("delete %d of %s: %w", i, key, err)
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
}
