package blob_test

import (
	"context"
	"fmt"
	"testing"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/blob"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

func TestVersionsGCS(t *testing.T)   { testVersions(t, gcsServer(t)) }
func TestVersionsAzure(t *testing.T) { testVersions(t, azureServer(t)) }

// testVersions checks the listing gives every record a version (the
// store's generations or ETags), and counts the requests of Versions when
// every version is known (one list call, no read) and after another
// client pushed one head (the list call and one read of the changed file).
func testVersions(t *testing.T, s *server) {
	bucket := s.newBucket(t)
	ctx := context.Background()
	opts := blob.Config{Layout: jsonld.LayoutB}
	writer := openDriver(t, s, bucket, opts, nil)
	ids := make([]model.ID, 5)
	for i := range ids {
		ids[i] = model.ID{Name: fmt.Sprintf("v%d", i), Branch: "main"}
		if err := writer.Create(ctx, model.NewLedger(ids[i], 1)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := writer.Update(ctx, ids[2], model.Index, driver.IfAbove(), model.RefValue("ix", 1)); err != nil {
		t.Fatal(err)
	}
	cnt, hc := newCounter()
	d := openDriver(t, s, bucket, opts, hc)
	list := func(known map[model.ID]string) *driver.VersionPage {
		t.Helper()
		cnt.Reset()
		p, err := d.Versions(ctx, driver.VersionsOptions{Known: known})
		if err != nil || len(p.Failed) > 0 || p.NextPageToken != "" || len(p.Versions) != len(ids) {
			t.Fatalf("versions: %+v %v", p, err)
		}
		for i, v := range p.Versions {
			if v.ID != ids[i] || v.Version == "" {
				t.Fatalf("entry %d: %+v, want %s with a version", i, v, ids[i])
			}
		}
		return p
	}
	known := map[model.ID]string{}
	for _, v := range list(nil).Versions {
		if v.Record == nil {
			t.Fatalf("%s: no record with nothing known", v.ID)
		}
		known[v.ID] = v.Version
	}
	for _, v := range list(known).Versions {
		if v.Record != nil {
			t.Fatalf("%s: read again at its known version", v.ID)
		}
	}
	if n := cnt.All.Load(); n != 1 {
		t.Errorf("versions, all known: %d requests, want 1 (the list call)", n)
	}
	if out, err := writer.Update(ctx, ids[2], model.Head, driver.IfAbove(), model.RefValue("c", 1)); err != nil || !out.Applied {
		t.Fatalf("push: %v %v", out, err)
	}
	for _, v := range list(known).Versions {
		if (v.Record != nil) != (v.ID == ids[2]) || v.Record != nil && (v.Record.Head.V != 1 || v.Record.Index.V != 1) {
			t.Fatalf("after a push to %s: %s read as %+v (version %q, known %q)", ids[2], v.ID, v.Record, v.Version, known[v.ID])
		}
	}
	if n := cnt.All.Load(); n != 2 {
		t.Errorf("versions after one push: %d requests, want 2 (the list call, one read)", n)
	}
}
