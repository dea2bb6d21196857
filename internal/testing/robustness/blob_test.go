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
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/jsonld"
)

// TestLinearizableGCS checks the blob driver on fake-gcs-server, with
// generation preconditions.
func TestLinearizableGCS(t *testing.T) {
	t.Parallel()
	endpoint := testenv.GCSEndpoint(t)
	runChecked(t, gcsAt(t, endpoint, jsonld.LayoutB)(endpoint), workload(8), false)
}

// gcsAt creates a bucket of fake-gcs-server (at server) and opens clients
// of the blob driver on it through an endpoint (the server or a proxy).
func gcsAt(t *testing.T, server string, l jsonld.Layout) Endpoints {
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
	return func(endpoint string) Opener {
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
}

// azureAt creates a container of Azurite (at server) and opens clients of
// the blob driver on it through an endpoint (the server or a proxy).
func azureAt(t *testing.T, server string, l jsonld.Layout) Endpoints {
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
	return func(endpoint string) Opener {
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
}

// TestFaultsGCS and TestFaultsAzure run the fault campaign through a fault
// proxy in front of fake-gcs-server and Azurite, in both layouts.
func TestFaultsGCS(t *testing.T) {
	t.Parallel()
	server := testenv.GCSEndpoint(t)
	for _, l := range []jsonld.Layout{jsonld.LayoutB, jsonld.LayoutC} {
		t.Run(l.String(), func(t *testing.T) {
			campaign(t, func(t *testing.T, seed uint64) { faultRun(t, seed, server, gcsAt(t, server, l), rates(nil)) })
		})
	}
}

func TestFaultsAzure(t *testing.T) {
	t.Parallel()
	server := testenv.AzureEndpoint(t)
	for _, l := range []jsonld.Layout{jsonld.LayoutB, jsonld.LayoutC} {
		t.Run(l.String(), func(t *testing.T) {
			campaign(t, func(t *testing.T, seed uint64) { faultRun(t, seed, server, azureAt(t, server, l), rates(nil)) })
		})
	}
}

// TestLinearizableAzure checks the blob driver on Azurite, with ETag
// preconditions.
func TestLinearizableAzure(t *testing.T) {
	t.Parallel()
	server := testenv.AzureEndpoint(t)
	runChecked(t, azureAt(t, server, jsonld.LayoutC)(server), workload(12), false)
}
