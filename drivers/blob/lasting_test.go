package blob_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"gocloud.dev/blob/azureblob"

	"nameservice.dev/nameservice/drivers/blob"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/model"
)

// TestMissingBucket checks, against fake-gcs-server and Azurite, that a
// missing bucket or container is a lasting failure found on open:
// NotProvisioned, saying what to do, without retries.
func TestMissingBucket(t *testing.T) {
	for _, s := range []*server{gcsServer(t), azureServer(t)} {
		t.Run(s.name, func(t *testing.T) {
			ctx := context.Background()
			c, hc := newCounter()
			b, err := s.open(ctx, "no-such-bucket-"+testenv.RandomHex(4), hc)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			_, err = blob.OpenBucket(ctx, b, blob.Config{})
			if !errors.Is(err, model.ErrNotProvisioned) || !strings.Contains(err.Error(), "create it") {
				t.Fatalf("open on a missing bucket: %v (code %v), want NotProvisioned saying to create it", err, model.Code(err))
			}
			if msg := err.Error(); strings.ContainsAny(msg, "\n<") || len(msg) > 400 {
				t.Errorf("the error carries the service's whole answer (%d bytes): %q", len(msg), msg)
			}
			if n := c.All.Load(); n != 1 {
				t.Errorf("%d requests, want 1: a missing bucket is not retried", n)
			}
		})
	}
}

// TestAzureWrongKey checks that Azurite's refusal of a wrong shared key is
// PermissionDenied, without retries and without the key in the message.
func TestAzureWrongKey(t *testing.T) {
	s := azureServer(t)
	bucket := s.newBucket(t)
	ctx := context.Background()
	const wrongKey = "V1JPTkdrZXlXUk9OR2tleVdST05Ha2V5V1JPTkdrZXk=" // base64, not Azurite's
	cred, err := azblob.NewSharedKeyCredential(azuriteAccount, wrongKey)
	if err != nil {
		t.Fatal(err)
	}
	c, hc := newCounter()
	cc, err := container.NewClientWithSharedKeyCredential(strings.TrimSuffix(s.endpoint, "/")+"/"+azuriteAccount+"/"+bucket, cred,
		&container.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: hc}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := azureblob.OpenBucket(ctx, cc, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	_, err = blob.OpenBucket(ctx, b, blob.Config{})
	if !errors.Is(err, model.ErrPermissionDenied) || !strings.Contains(err.Error(), "grant") {
		t.Fatalf("open with a wrong key: %v (code %v), want PermissionDenied saying what to grant", err, model.Code(err))
	}
	if msg := err.Error(); strings.ContainsAny(msg, "\n<") || len(msg) > 400 {
		t.Errorf("the error carries the service's whole answer (%d bytes): %q", len(msg), msg)
	}
	if strings.Contains(err.Error(), wrongKey) {
		t.Errorf("the error shows the key: %v", err)
	}
	if n := c.All.Load(); n != 1 {
		t.Errorf("%d requests, want 1: a refused credential is not retried", n)
	}
}

// TestContainerDeletedUnderClients: an Azure container removed while a
// driver has it open makes a lookup fail with NotProvisioned, not answer
// that the record does not exist. (GCS answers a read in a removed bucket
// as a missing object: docs/gcs.md.)
func TestContainerDeletedUnderClients(t *testing.T) {
	s := azureServer(t)
	ctx := context.Background()
	bucket := s.newBucket(t)
	d := openDriver(t, s, bucket, blob.Config{}, nil)
	id := model.ID{Name: "db", Branch: "main"}
	testenv.Must(t, d.Create(ctx, model.NewLedger(id, 1)))
	c, err := azureClient(s.endpoint, bucket, nil)
	testenv.Must(t, err)
	_, err = c.Delete(ctx, nil)
	testenv.Must(t, err)
	if _, err := d.Get(ctx, id); !errors.Is(err, model.ErrNotProvisioned) {
		t.Fatalf("lookup in a removed container: %v (code %v), want NotProvisioned", err, model.Code(err))
	}
}
