package blob_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	gblob "gocloud.dev/blob"
	"gocloud.dev/blob/azureblob"
	"gocloud.dev/blob/gcsblob"
	"google.golang.org/api/option"

	"nameservice.dev/nameservice/drivers/blob"
	"nameservice.dev/nameservice/internal/testing/objstoretest"
	"nameservice.dev/nameservice/internal/testing/testenv"
)

// Azurite's well-known development account.
const (
	azuriteAccount = "devstoreaccount1"
	azuriteKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// server is one test server: fake-gcs-server or Azurite.
type server struct {
	name     string // gs or azblob
	endpoint string
	// newBucket creates a bucket (container) of its own and returns its name.
	newBucket func(t testing.TB) string
	// open returns a new, independent gocloud bucket on the server; hc nil
	// means a default HTTP client.
	open func(ctx context.Context, bucket string, hc *http.Client) (*gblob.Bucket, error)
}

func gcsServer(t testing.TB) *server {
	s := &server{name: blob.SchemeGCS, endpoint: testenv.GCSEndpoint(t)}
	s.newBucket = func(t testing.TB) string {
		t.Helper()
		name := "ns-" + testenv.RandomHex(6)
		c, err := gcsClient(context.Background(), s.endpoint, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.Bucket(name).Create(context.Background(), "test", nil); err != nil {
			t.Fatalf("create bucket: %v", err)
		}
		return name
	}
	s.open = s.gcsOpen
	return s
}

// gcsOpen opens bucket on the GCS server s.
func (s *server) gcsOpen(ctx context.Context, bucket string, hc *http.Client) (*gblob.Bucket, error) {
	c, err := gcsClient(ctx, s.endpoint, hc)
	if err != nil {
		return nil, err
	}
	return gcsblob.OpenBucket(ctx, nil, bucket, &gcsblob.Options{Client: c})
}

// gcsClient returns a storage client of fake-gcs-server, as gcsblob makes
// one for STORAGE_EMULATOR_HOST.
func gcsClient(ctx context.Context, endpoint string, hc *http.Client) (*storage.Client, error) {
	opts := []option.ClientOption{option.WithEndpoint(endpoint + "/storage/v1/"), option.WithoutAuthentication()}
	if hc != nil {
		opts = append(opts, option.WithHTTPClient(hc))
	}
	return storage.NewClient(ctx, opts...)
}

func azureServer(t testing.TB) *server {
	s := &server{name: blob.SchemeAzure, endpoint: testenv.AzureEndpoint(t)}
	s.newBucket = func(t testing.TB) string {
		t.Helper()
		name := "ns-" + testenv.RandomHex(6)
		c, err := azureClient(s.endpoint, name, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Create(context.Background(), nil); err != nil {
			t.Fatalf("create container: %v", err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, _ = c.Delete(ctx, nil)
		})
		return name
	}
	s.open = func(ctx context.Context, bucket string, hc *http.Client) (*gblob.Bucket, error) {
		c, err := azureClient(s.endpoint, bucket, hc)
		if err != nil {
			return nil, err
		}
		return azureblob.OpenBucket(ctx, c, nil)
	}
	return s
}

// azureClient returns a container client of Azurite with the development
// account's shared key.
func azureClient(endpoint, name string, hc *http.Client) (*container.Client, error) {
	cred, err := azblob.NewSharedKeyCredential(azuriteAccount, azuriteKey)
	if err != nil {
		return nil, err
	}
	opts := &container.ClientOptions{}
	if hc != nil {
		opts.ClientOptions = azcore.ClientOptions{Transport: hc}
	}
	return container.NewClientWithSharedKeyCredential(strings.TrimSuffix(endpoint, "/")+"/"+azuriteAccount+"/"+name, cred, opts)
}

// openDriver opens a driver on bucket of s, failing the test on error.
func openDriver(t testing.TB, s *server, bucket string, opts blob.Config, hc *http.Client) *blob.Driver {
	t.Helper()
	ctx := context.Background()
	b, err := s.open(ctx, bucket, hc)
	if err != nil {
		t.Fatal(err)
	}
	d, err := blob.OpenBucket(ctx, b, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// newCounter returns a request counter and an HTTP client sending
// through it.
func newCounter() (*objstoretest.Counter, *http.Client) { return objstoretest.NewCounter(nil) }
