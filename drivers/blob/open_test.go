package blob_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	gblob "gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/memblob"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers"
	"nameservice.dev/nameservice/drivers/blob"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

func TestParseURL(t *testing.T) {
	good := []struct {
		in, bucketURL, prefix string
		layout                jsonld.Layout
	}{
		{"gs://b", "gs://b", "", jsonld.LayoutB},
		{"gs://b/p/q?layout=c&anonymous=true", "gs://b?anonymous=true", "/p/q", jsonld.LayoutC},
		{"GS://b/?dialect=fluree-v4&access_id=-", "gs://b?access_id=-", "/", jsonld.LayoutB},
		{"azblob://c/ns?domain=127.0.0.1:10000&protocol=http&localemu=true&layout=C",
			"azblob://c?domain=127.0.0.1%3A10000&localemu=true&protocol=http", "/ns", jsonld.LayoutC},
	}
	for _, g := range good {
		u, _ := url.Parse(g.in)
		opts, err := blob.ParseURL(u)
		if err != nil {
			t.Errorf("%s: %v", g.in, err)
			continue
		}
		if bu := opts.BucketURL; bu != g.bucketURL || opts.Prefix != g.prefix || opts.Layout != g.layout {
			t.Errorf("%s: got %q %+v, want %q prefix %q layout %v", g.in, bu, opts, g.bucketURL, g.prefix, g.layout)
		}
	}
	if u, _ := url.Parse("gs://b?list_parallel=32"); true {
		if opts, err := blob.ParseURL(u); err != nil || opts.ListParallel != 32 {
			t.Errorf("list_parallel=32: %+v %v", opts, err)
		}
	}
	bad := []string{
		"gs:///p", "gs://b?region=x", "azblob://c?anonymous=true", "gs://b?layout=d",
		"gs://b?dialect=nope", "gs://user:hunter2@b", "s3://b", "gs://b?list_parallel=0",
	}
	for _, in := range bad {
		u, _ := url.Parse(in)
		_, err := blob.ParseURL(u)
		if !errors.Is(err, model.ErrInvalidArgument) {
			t.Errorf("%s: error %v, want one wrapping ErrInvalidArgument", in, err)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: error shows the password: %v", in, err)
		}
	}
}

// roundTrip creates a record through d, pushes its head and reads it back.
func roundTrip(t *testing.T, d driver.Driver) {
	t.Helper()
	ctx := context.Background()
	id := model.ID{Name: "db", Branch: "main"}
	if err := d.Create(ctx, model.NewLedger(id, 1)); err != nil {
		t.Fatal(err)
	}
	out, err := d.Update(ctx, id, model.Head, driver.IfAbove(), model.RefValue("a", 1))
	if err != nil || !out.Applied {
		t.Fatalf("push: %v %v", out, err)
	}
	r, err := d.Get(ctx, id)
	if err != nil || !r.Head.Equal(model.RefValue("a", 1)) {
		t.Fatalf("get: %v %v", r, err)
	}
}

// TestOpenURLGCS opens gs:// through the registry, with gocloud's own
// STORAGE_EMULATOR_HOST, and checks where the files land.
func TestOpenURLGCS(t *testing.T) {
	s := gcsServer(t)
	bucket := s.newBucket(t)
	t.Setenv("STORAGE_EMULATOR_HOST", strings.TrimPrefix(s.endpoint, "http://"))
	d, err := drivers.Open(context.Background(), "gs://"+bucket+"/pre/fix?layout=c")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	roundTrip(t, d)
	wantKey(t, s, bucket, "pre/fix/ns@v2/db/main.head.json")
}

// TestOpenURLAzure opens azblob:// through the registry, with gocloud's
// AZURE_STORAGE_* variables and URL parameters for Azurite.
func TestOpenURLAzure(t *testing.T) {
	s := azureServer(t)
	bucket := s.newBucket(t)
	t.Setenv("AZURE_STORAGE_ACCOUNT", azuriteAccount)
	t.Setenv("AZURE_STORAGE_KEY", azuriteKey)
	host := strings.TrimPrefix(s.endpoint, "http://")
	d, err := drivers.Open(context.Background(), "azblob://"+bucket+"/pre?layout=b&protocol=http&localemu=true&domain="+host)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	roundTrip(t, d)
	wantKey(t, s, bucket, "pre/ns@v2/db/main.json")
}

func wantKey(t *testing.T, s *server, bucket, key string) {
	t.Helper()
	b, err := s.open(context.Background(), bucket, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if ok, err := b.Exists(context.Background(), key); !ok || err != nil {
		t.Fatalf("%s not in the bucket (%v)", key, err)
	}
}

// TestRefusesOtherBucketTypes: a bucket gocloud cannot put a precondition
// on is refused, never used unconditionally.
func TestRefusesOtherBucketTypes(t *testing.T) {
	fb, err := fileblob.OpenBucket(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]*gblob.Bucket{"memblob": memblob.OpenBucket(nil), "fileblob": fb} {
		_, err := blob.OpenBucket(context.Background(), b, blob.Config{})
		if !errors.Is(err, model.ErrUnsupported) || !strings.Contains(err.Error(), "precondition") {
			t.Errorf("%s: error %v, want one wrapping ErrUnsupported that names the preconditions", name, err)
		}
	}
}

// TestProbeRefusesServiceIgnoringPreconditions puts a proxy that drops
// ifGenerationMatch in front of fake-gcs-server: Open must refuse it.
func TestProbeRefusesServiceIgnoringPreconditions(t *testing.T) {
	s := gcsServer(t)
	bucket := s.newBucket(t)
	target, _ := url.Parse(s.endpoint)
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		q := r.Out.URL.Query()
		q.Del("ifGenerationMatch")
		r.Out.URL.RawQuery = q.Encode()
		r.Out.Header.Del("x-goog-if-generation-match")
	}}
	srv := httptest.NewServer(proxy)
	defer srv.Close()
	b, err := (&server{name: s.name, endpoint: srv.URL}).gcsOpen(context.Background(), bucket, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = blob.OpenBucket(context.Background(), b, blob.Config{})
	if !errors.Is(err, model.ErrUnsupported) {
		t.Fatalf("open through a proxy dropping preconditions: %v, want ErrUnsupported", err)
	}
	t.Logf("refused: %v", err)
}

// TestProbeRefusesPrefixedAzureBucket: a gocloud-prefixed Azure bucket
// would send conditional deletes to the wrong blob; Open refuses it.
func TestProbeRefusesPrefixedAzureBucket(t *testing.T) {
	s := azureServer(t)
	b, err := s.open(context.Background(), s.newBucket(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = blob.OpenBucket(context.Background(), gblob.PrefixedBucket(b, "x/"), blob.Config{})
	if !errors.Is(err, model.ErrUnsupported) || !strings.Contains(err.Error(), "prefix") {
		t.Fatalf("open of a prefixed bucket: %v, want ErrUnsupported naming the prefix", err)
	}
}
