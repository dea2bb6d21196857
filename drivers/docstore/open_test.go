package docstore

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"gocloud.dev/docstore"

	"nameservice.dev/nameservice/drivers"
	"nameservice.dev/nameservice/internal/layout"
	"nameservice.dev/nameservice/internal/objstore"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

func TestURLs(t *testing.T) {
	ctx := context.Background()
	for raw, want := range map[string]error{
		"docstore+firestore://projects/p/databases/d/documents/c": model.ErrUnsupported,
		"docstore+mongo://db/coll":                                model.ErrUnsupported,
		"docstore+dynamodb://t?consistent_read=false":             model.ErrInvalidArgument,
		"docstore+dynamodb://t?region=r&sort_key=sk":              model.ErrInvalidArgument,
		"docstore+dynamodb://t?region=r&partition_key=pk":         model.ErrInvalidArgument,
		"docstore+dynamodb://t?region=r&revision_field=rev":       model.ErrInvalidArgument,
		"docstore+mem://c?filename=/tmp/c.gob":                    model.ErrInvalidArgument,
		"docstore+mem://c/key/extra":                              model.ErrInvalidArgument,
	} {
		d, err := drivers.Open(ctx, raw)
		if !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", raw, err, want)
		}
		if err != nil && errors.Is(want, model.ErrUnsupported) && !strings.Contains(err.Error(), "gocloud.dev/docstore/") {
			t.Errorf("%s: %v, want the package to import named", raw, err)
		}
		if d != nil {
			_ = d.Close()
		}
	}
	for raw, want := range map[string]string{
		"dynamodb://tbl?region=r":                   "dynamodb://tbl?allow_scans=true&consistent_read=true&partition_key=key&region=r",
		"dynamodb://tbl?region=r&partition_key=key": "dynamodb://tbl?allow_scans=true&consistent_read=true&partition_key=key&region=r",
		"mem://c":      "mem://c/key",
		"mongo://db/c": "mongo://db/c?id_field=id",
		"firestore://projects/p/databases/d/documents/c": "firestore://projects/p/databases/d/documents/c?name_field=id",
	} {
		if !docstore.DefaultURLMux().ValidCollectionScheme(mustParse(t, raw).Scheme) {
			continue // the provider is not linked into the test
		}
		u, err := collectionURL(mustParse(t, raw))
		if err != nil {
			t.Fatal(err)
		}
		if got := u.String(); got != want {
			t.Errorf("%s: collection URL %s, want %s", raw, got, want)
		}
	}
}

func mustParse(t *testing.T, raw string) *url.URL {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func mustMem(t *testing.T) *Driver {
	d, err := openURL(context.Background(), memURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// TestDocumentLayout: a record is the ns@v2 files of layout B, one
// document each, keyed by the file's layout key, holding its bytes.
func TestDocumentLayout(t *testing.T) {
	d, ctx, id := mustMem(t), context.Background(), model.ID{Name: "a/b", Branch: "c"}
	if err := d.Create(ctx, model.NewLedger(id, 1)); err != nil {
		t.Fatal(err)
	}
	files, err := layout.Files(jsonld.LayoutB, id)
	if err != nil {
		t.Fatal(err)
	}
	if files[0].Key != "ns@v2/a/b/c.json" {
		t.Fatalf("defining file %s, want ns@v2/a/b/c.json", files[0].Key)
	}
	m := map[string]any{fieldKey: files[0].Key}
	if err := d.coll.Get(ctx, m); err != nil {
		t.Fatal(err)
	}
	data, ok := m[fieldData].([]byte)
	if !ok || !strings.Contains(string(data), `"@id"`) || m[docstore.DefaultRevisionField] == nil || len(m) != 3 {
		t.Fatalf("document of %s: %v, want key, data (the file's JSON-LD) and revision", files[0].Key, m)
	}
	var keys []string
	err = store{d}.List(ctx, "", "", func(e objstore.Entry) error { keys = append(keys, e.Key); return nil })
	if err != nil || len(keys) != 1 || keys[0] != files[0].Key {
		t.Fatalf("documents %v, %v; want one, the defining file's (layout B writes the others on their first push)", keys, err)
	}
}

func TestMemDriversShareTheCollection(t *testing.T) {
	u := memURL(t)
	ctx := context.Background()
	a, err := drivers.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	b, err := drivers.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	id := model.ID{Name: "x", Branch: "main"}
	if err := a.Create(ctx, model.NewLedger(id, 1)); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(ctx, id); err != nil {
		t.Fatalf("second driver after the first closed: %v", err)
	}
	if _, err := a.Get(ctx, id); !errors.Is(err, model.ErrInvalidArgument) {
		t.Fatalf("closed driver: %v", err)
	}
	_ = b.Close()
	c, err := drivers.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Get(ctx, id); !errors.Is(err, model.ErrNotFound) {
		t.Fatalf("reopened after every driver closed: %v, want an empty collection", err)
	}
}
