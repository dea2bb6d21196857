package s3etag_test

import (
	"context"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"nameservice.dev/nameservice/conformance"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/s3etag"
	"nameservice.dev/nameservice/internal/layout"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// harness serves the whole suite from one bucket (the suite isolates its
// tests by ID prefix); every client is an independent Open, with its own
// cache, as another process would be.
func harness(t *testing.T, l jsonld.Layout, lock *s3etag.LockConfig) conformance.Harness {
	endpoint, bucket := newBucket(t)
	cfg := baseConfig(endpoint, bucket, l)
	cfg.Prefix = "suite"
	cfg.Lock = lock
	return suiteHarness(cfg)
}

// suiteHarness opens every client with cfg.
func suiteHarness(cfg s3etag.Config) conformance.Harness {
	return conformance.CorruptibleHarnessFunc(func(context.Context, *testing.T) (conformance.Opener, conformance.CorruptFunc, error) {
		open := func(ctx context.Context) (driver.Driver, error) { return s3etag.Open(ctx, cfg) }
		return open, func(ctx context.Context, id model.ID) error { return corrupt(ctx, cfg, id) }, nil
	})
}

// corrupt overwrites the defining object of id with bytes that are no JSON.
func corrupt(ctx context.Context, cfg s3etag.Config, id model.ID) error {
	files, err := layout.Files(cfg.Layout, id)
	if err != nil {
		return err
	}
	client, err := s3etag.NewClient(ctx, cfg)
	if err != nil {
		return err
	}
	key := path.Join(cfg.Prefix, files[0].Key)
	_, err = client.PutObject(ctx, &s3.PutObjectInput{Bucket: &cfg.Bucket, Key: &key, Body: strings.NewReader("{not json")})
	return err
}

func TestConformanceLayoutB(t *testing.T) {
	t.Parallel()
	conformance.Run(t, harness(t, jsonld.LayoutB, nil))
}

func TestConformanceLayoutC(t *testing.T) {
	t.Parallel()
	conformance.Run(t, harness(t, jsonld.LayoutC, nil))
}

// suiteLease is the lock lease of the suites in lock mode: long enough for
// a PUT on a loaded machine (a CI runner once took over 10 s), since a
// write cut short by its lease may have landed, and a create whose object
// is then absent is outcome unknown. No case of the suite waits a lease
// out: every holder releases.
const suiteLease = 30 * time.Second

func TestConformanceLockMode(t *testing.T) {
	t.Parallel()
	conformance.Run(t, harness(t, jsonld.LayoutB, newLockTable(t, suiteLease)))
}

// newLockTable creates a lock table of its own on DynamoDB Local.
func newLockTable(t testing.TB, timeout time.Duration) *s3etag.LockConfig {
	t.Helper()
	lc := &s3etag.LockConfig{
		Table: "nslock-" + testenv.RandomHex(6), Region: "us-east-1", Endpoint: testenv.DynamoDBEndpoint(t),
		Timeout: timeout, SkewRate: 2, Poll: 20 * time.Millisecond, Credentials: testCreds,
	}
	if err := lc.Provision(context.Background()); err != nil {
		t.Fatal(err)
	}
	return lc
}

// TestConformanceLockModeIgnoringStore runs the suite in lock mode against
// a store that ignores every precondition (versitygw behind testenv.S3IgnoringPreconditions):
// the DynamoDB lock alone keeps the writers apart.
func TestConformanceLockModeIgnoringStore(t *testing.T) {
	t.Parallel()
	endpoint, bucket := newBucket(t)
	cfg := baseConfig(testenv.S3IgnoringPreconditions(t, endpoint, testCreds), bucket, jsonld.LayoutC)
	cfg.Prefix = "suite"
	cfg.Lock = newLockTable(t, suiteLease)
	conformance.Run(t, suiteHarness(cfg))
}

// TestConformanceDeleteIfMatchIgnored runs the suite against versitygw
// behind a proxy that drops If-Match from every DeleteObject, as MinIO and
// other stores ignore it: the driver opens such a store natively (the probe
// records the ignored condition) and keeps every guarantee, purges racing
// creates included, since no decision rests on a conditional delete.
func TestConformanceDeleteIfMatchIgnored(t *testing.T) {
	t.Parallel()
	endpoint, bucket := newBucket(t)
	cfg := baseConfig(testenv.S3IgnoringDeletePreconditions(t, endpoint, testCreds), bucket, jsonld.LayoutB)
	cfg.Prefix = "suite"
	d, err := s3etag.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("open a store that ignores only DELETE If-Match: %v", err)
	}
	if p := d.Probed(); !p.Enforced(s3etag.ProbeCreate) || !p.Enforced(s3etag.ProbeUpdate) || p.Enforced(s3etag.ProbeDelete) {
		t.Fatalf("probe through the proxy = %+v, want the PUT preconditions enforced and DELETE If-Match ignored", p)
	}
	_ = d.Close()
	conformance.Run(t, suiteHarness(cfg))
}
