package s3etag_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"nameservice.dev/nameservice/drivers/s3etag"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// TestLastingFailures checks, against versitygw, that a missing bucket and
// refused credentials are lasting failures: their own codes, a message that
// says what to do, and one request each (never retried).
func TestLastingFailures(t *testing.T) {
	endpoint, bucket := newBucket(t)
	ctx := context.Background()

	t.Run("MissingBucket", func(t *testing.T) {
		c, hc := newCounter()
		cfg := baseConfig(endpoint, "no-such-bucket-"+testenv.RandomHex(4), jsonld.LayoutB)
		cfg.HTTPClient = hc
		_, err := s3etag.Open(ctx, cfg)
		if !errors.Is(err, model.ErrNotProvisioned) || !strings.Contains(err.Error(), cfg.Bucket) || !strings.Contains(err.Error(), "create it") {
			t.Fatalf("open on a missing bucket: %v (code %v), want NotProvisioned naming the bucket and what to do", err, model.Code(err))
		}
		if n := c.All.Load(); n != 1 {
			t.Errorf("%d requests, want 1: a missing bucket is not retried", n)
		}
	})
	t.Run("WrongCredentials", func(t *testing.T) {
		const secret = "WRONGsecretWRONG0123456789"
		c, hc := newCounter()
		cfg := baseConfig(endpoint, bucket, jsonld.LayoutB)
		cfg.HTTPClient = hc
		cfg.Credentials = credentials.NewStaticCredentialsProvider(os.Getenv("AWS_ACCESS_KEY_ID"), secret, "") // a known key, a wrong secret
		_, err := s3etag.Open(ctx, cfg)
		if !errors.Is(err, model.ErrPermissionDenied) || !strings.Contains(err.Error(), "s3:PutObject") {
			t.Fatalf("open with wrong credentials: %v (code %v), want PermissionDenied naming s3:PutObject", err, model.Code(err))
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the error shows the secret: %v", err)
		}
		if n := c.All.Load(); n != 1 {
			t.Errorf("%d requests, want 1: a refused credential is not retried", n)
		}
	})
	t.Run("MissingLockTable", func(t *testing.T) {
		cfg := baseConfig(endpoint, bucket, jsonld.LayoutB)
		cfg.Lock = &s3etag.LockConfig{Table: "no-such-lock-" + testenv.RandomHex(4), Region: "us-east-1",
			Endpoint: testenv.DynamoDBEndpoint(t), Credentials: testCreds}
		d, err := s3etag.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		id, _ := model.ParseID("lasting" + testenv.RandomHex(3))
		err = d.Create(ctx, model.NewLedger(id, 0))
		if !errors.Is(err, model.ErrNotProvisioned) || !strings.Contains(err.Error(), "ns table create") {
			t.Fatalf("create with a missing lock table: %v (code %v), want NotProvisioned saying `ns table create`", err, model.Code(err))
		}
	})
}
