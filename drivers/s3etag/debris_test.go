package s3etag_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/s3etag"
	"nameservice.dev/nameservice/internal/testing/objstoretest"
	"nameservice.dev/nameservice/jsonld"
)

// TestDebris: files of a purged record written back with the SDK (a purge
// that stopped after removing the defining file) do not show through a
// re-create, and a writer whose cache predates the purge gets ErrNotFound.
func TestDebris(t *testing.T) {
	for _, l := range []jsonld.Layout{jsonld.LayoutB, jsonld.LayoutC} {
		t.Run(l.String(), func(t *testing.T) {
			endpoint, bucket := newBucket(t)
			ctx := context.Background()
			cfg := baseConfig(endpoint, bucket, l)
			client, err := s3etag.NewClient(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			open := func(t *testing.T) driver.Driver {
				d, err := s3etag.Open(ctx, cfg)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = d.Close() })
				return d
			}
			raw := objstoretest.Raw{
				Get: func(ctx context.Context, key string) ([]byte, error) {
					out, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: &key})
					if nsk := (*types.NoSuchKey)(nil); errors.As(err, &nsk) {
						return nil, nil
					}
					if err != nil {
						return nil, err
					}
					defer out.Body.Close()
					return io.ReadAll(out.Body)
				},
				Put: func(ctx context.Context, key string, data []byte) error {
					_, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: aws.String(key), Body: bytes.NewReader(data)})
					return err
				},
			}
			objstoretest.Debris(t, l, open, raw)
		})
	}
}
