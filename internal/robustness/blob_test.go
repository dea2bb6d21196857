package robustness

import (
	"context"
	"testing"

	"cloud.google.com/go/storage"
	"gocloud.dev/blob/gcsblob"
	"google.golang.org/api/option"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/blob"
	"nameservice.dev/nameservice/internal/testenv"
)

// TestLinearizableGCS checks the blob driver on fake-gcs-server, with
// generation preconditions.
func TestLinearizableGCS(t *testing.T) {
	t.Parallel()
	endpoint := testenv.GCSEndpoint(t)
	client := func(ctx context.Context) (*storage.Client, error) {
		return storage.NewClient(ctx, option.WithEndpoint(endpoint+"/storage/v1/"), option.WithoutAuthentication())
	}
	bucket := "ns-robust-" + testenv.RandomHex(4)
	c, err := client(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Bucket(bucket).Create(context.Background(), "test", nil); err != nil {
		t.Fatalf("create bucket: %v", err)
	}
	open := func(ctx context.Context) (driver.Driver, error) {
		c, err := client(ctx)
		if err != nil {
			return nil, err
		}
		b, err := gcsblob.OpenBucket(ctx, nil, bucket, &gcsblob.Options{Client: c})
		if err != nil {
			return nil, err
		}
		return blob.OpenBucket(ctx, b, blob.Config{Layout: driver.LayoutB})
	}
	runChecked(t, open, workload(8), false)
}
