package s3etag_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"nameservice.dev/nameservice/drivers"
	"nameservice.dev/nameservice/drivers/s3etag"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// TestProbeRefusesStoreIgnoringConditions: through the proxy, Open fails
// with ErrUnsupported saying what is ignored; unsafe=true and the lock
// protocol open it anyway.
func TestProbeRefusesStoreIgnoringConditions(t *testing.T) {
	endpoint, bucket := newBucket(t)
	ctx := context.Background()
	cfg := baseConfig(testenv.S3IgnoringPreconditions(t, endpoint, testCreds), bucket, jsonld.LayoutB)
	_, err := s3etag.Open(ctx, cfg)
	if !errors.Is(err, model.ErrUnsupported) || !strings.Contains(err.Error(), "If-None-Match") {
		t.Fatalf("open through a proxy that drops preconditions: %v, want ErrUnsupported naming If-None-Match", err)
	}
	t.Log(err)
	cfg.Unsafe = true
	d, err := s3etag.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("unsafe open: %v", err)
	}
	if p := d.Probed(); p.Enforced(s3etag.ProbeCreate) || p.Enforced(s3etag.ProbeUpdate) || p.Enforced(s3etag.ProbeDelete) {
		t.Errorf("probe through the proxy = %+v, want nothing enforced", p)
	}
	cfg.Unsafe = false
	cfg.Lock = newLockTable(t, time.Second)
	if _, err := s3etag.Open(ctx, cfg); err != nil {
		t.Fatalf("open in lock mode: %v", err)
	}
	direct, err := s3etag.Open(ctx, baseConfig(endpoint, bucket, jsonld.LayoutB))
	if err != nil {
		t.Fatal(err)
	}
	if p := direct.Probed(); !p.Enforced(s3etag.ProbeCreate) || !p.Enforced(s3etag.ProbeUpdate) || !p.Enforced(s3etag.ProbeDelete) {
		t.Errorf("probe of versitygw = %+v, want everything enforced", p)
	}
}

// TestOpenURL opens through the registry, and bad URLs fail without
// echoing secrets.
func TestOpenURL(t *testing.T) {
	endpoint, bucket := newBucket(t)
	ctx := context.Background()
	d, err := drivers.Open(ctx, "s3://"+bucket+"/some/prefix?layout=c&region=us-east-1&endpoint="+url.QueryEscape(endpoint))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	id := model.ID{Name: "x", Branch: "main"}
	if err := d.Create(ctx, model.NewLedger(id, 1)); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{
		"s3://" + bucket + "?layout=d",
		"s3://" + bucket + "?nope=1",
		"s3://user:secretpw@" + bucket,
		"s3://" + bucket + "?lock=" + url.QueryEscape("dynamodb://t?session_token=secretpw&nope=1"),
	} {
		_, err := drivers.Open(ctx, bad)
		if !errors.Is(err, model.ErrInvalidArgument) || strings.Contains(err.Error(), "secretpw") {
			t.Errorf("open %q: %v, want ErrInvalidArgument without the secret", bad, err)
		}
	}
}
