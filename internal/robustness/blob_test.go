package robustness

import (
	"context"
	"strings"
	"testing"

	"cloud.google.com/go/storage"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"gocloud.dev/blob/azureblob"
	"gocloud.dev/blob/gcsblob"
	"google.golang.org/api/option"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/blob"
	"nameservice.dev/nameservice/internal/testenv"
	"nameservice.dev/nameservice/jsonld"
)

// TestLinearizableGCS checks the blob driver on fake-gcs-server, with
// generation preconditions.
func TestLinearizableGCS(t *testing.T) {
	t.Parallel()
	endpoint := testenv.GCSEndpoint(t)
	runChecked(t, gcsOpener(t, endpoint, endpoint, jsonld.LayoutB), workload(8), false)
}

// gcsOpener returns an opener of the blob driver on a new bucket of
// fake-gcs-server, reached through endpoint (the server or a proxy).
func gcsOpener(t *testing.T, server, endpoint string, l jsonld.Layout) Opener {
	t.Helper()
	// JSON reads: fake-gcs-server routes XML-API reads by Host, which the
	// proxy keeps as its own.
	client := func(ctx context.Context, ep string) (*storage.Client, error) {
		return storage.NewClient(ctx, option.WithEndpoint(ep+"/storage/v1/"), option.WithoutAuthentication(), storage.WithJSONReads())
	}
	bucket := "ns-robust-" + testenv.RandomHex(4)
	c, err := client(context.Background(), server)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Bucket(bucket).Create(context.Background(), "test", nil); err != nil {
		t.Fatalf("create bucket: %v", err)
	}
	return func(ctx context.Context) (driver.Driver, error) {
		c, err := client(ctx, endpoint)
		if err != nil {
			return nil, err
		}
		b, err := gcsblob.OpenBucket(ctx, nil, bucket, &gcsblob.Options{Client: c})
		if err != nil {
			return nil, err
		}
		return blob.OpenBucket(ctx, b, blob.Config{Layout: l})
	}
}

// azureOpener returns an opener of the blob driver on a new container of
// Azurite, reached through endpoint (the server or a proxy).
func azureOpener(t *testing.T, server, endpoint string, l jsonld.Layout) Opener {
	t.Helper()
	const account = "devstoreaccount1"
	cred, err := azblob.NewSharedKeyCredential(account, "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==")
	if err != nil {
		t.Fatal(err)
	}
	name := "ns-robust-" + testenv.RandomHex(4)
	client := func(ep string) (*container.Client, error) {
		return container.NewClientWithSharedKeyCredential(strings.TrimSuffix(ep, "/")+"/"+account+"/"+name, cred, nil)
	}
	c, err := client(server)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(context.Background(), nil); err != nil {
		t.Fatalf("create container: %v", err)
	}
	t.Cleanup(func() { _, _ = c.Delete(context.Background(), nil) })
	return func(ctx context.Context) (driver.Driver, error) {
		c, err := client(endpoint)
		if err != nil {
			return nil, err
		}
		b, err := azureblob.OpenBucket(ctx, c, nil)
		if err != nil {
			return nil, err
		}
		return blob.OpenBucket(ctx, b, blob.Config{Layout: l})
	}
}

// TestFaultsGCS and TestFaultsAzure run the workload, purges included,
// through a fault proxy in front of fake-gcs-server and Azurite, in both
// layouts.
func TestFaultsGCS(t *testing.T) {
	t.Parallel()
	server := testenv.GCSEndpoint(t)
	for i, l := range []jsonld.Layout{jsonld.LayoutB, jsonld.LayoutC} {
		t.Run(l.String(), func(t *testing.T) {
			p := startProxy(t, server, 21+uint64(i), rates(nil))
			runChecked(t, gcsOpener(t, server, p.URL(), l), faultWorkload(9, p), true)
			requireFaults(t, p)
		})
	}
}

func TestFaultsAzure(t *testing.T) {
	t.Parallel()
	server := testenv.AzureEndpoint(t)
	for i, l := range []jsonld.Layout{jsonld.LayoutB, jsonld.LayoutC} {
		t.Run(l.String(), func(t *testing.T) {
			p := startProxy(t, server, 31+uint64(i), rates(nil))
			runChecked(t, azureOpener(t, server, p.URL(), l), faultWorkload(10, p), true)
			requireFaults(t, p)
		})
	}
}

// TestLinearizableAzure checks the blob driver on Azurite, with ETag
// preconditions.
func TestLinearizableAzure(t *testing.T) {
	t.Parallel()
	server := testenv.AzureEndpoint(t)
	runChecked(t, azureOpener(t, server, server, jsonld.LayoutC), workload(12), false)
}
