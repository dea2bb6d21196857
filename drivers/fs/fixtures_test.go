package fs_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"nameservice.dev/nameservice/driver"
	nsfs "nameservice.dev/nameservice/drivers/fs"
	"nameservice.dev/nameservice/internal/testing/fixturetest"
	"nameservice.dev/nameservice/model"
)

// fixtures are the ns@v2 fixture cases.
var fixtures = fixturetest.NSv2()

// TestFixtures lists every fixture root with the driver (both writer
// dialects read alike) and compares the records with expected.json.
func TestFixtures(t *testing.T) {
	fixturetest.Run(t, func(t *testing.T, _ string, files map[string][]byte) driver.Driver {
		dir := t.TempDir()
		for rel, b := range files {
			p := filepath.Join(dir, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		d, err := nsfs.Open(context.Background(), nsfs.Config{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		return d
	})
}

// copyTree copies a directory into a temp dir, so tests may write.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if e.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestFixturesUpdatePreservesFlureeFiles: in the fluree-v4 dialect, a
// rewrite that changes nothing else keeps Fluree's bytes, and an update
// changes only the members it must, adding its entry to f:writeIDs.
func TestFixturesUpdatePreservesFlureeFiles(t *testing.T) {
	dir := copyTree(t, filepath.Join(fixtures, "fluree-v4-status-config"))
	d, err := nsfs.Open(context.Background(), nsfs.Config{Dir: dir, Dialect: "fluree-v4"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id := model.ID{Name: "mydb", Branch: "main"}
	path := filepath.Join(dir, "ns@v2", "mydb", "main.json")
	orig, _ := os.ReadFile(path)
	cur, _ := d.Get(ctx, id)
	// An update that is not applied writes nothing.
	if out, err := d.Update(ctx, id, model.Head, driver.IfAbove(), model.RefValue("x", 5)); err != nil || out.Applied {
		t.Fatalf("stale publish: %v %v", out, err)
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, orig) {
		t.Fatal("a stale publish rewrote the file")
	}
	wctx := driver.WithWrite(ctx, driver.Write{ID: "w1"})
	out, err := d.Update(wctx, id, model.Head, driver.IfEquals(*cur.Head), model.RefValue("bagnext", 6))
	if err != nil || !out.Applied {
		t.Fatalf("publish: %v %v", out, err)
	}
	now, _ := os.ReadFile(path)
	want := bytes.Replace(orig, []byte(`"f:commitCid": "bagaybqabciqg7u3nfra7tdl3yepwx3tfpm3rsjthlprt75gdokpr3uzrvulwk4i",
  "f:t": 5,`), []byte(`"f:commitCid": "bagnext",
  "f:t": 6,`), 1)
	// The write's entry is added last (Fluree ignores members it does not know).
	want = bytes.Replace(want, []byte("\"\n}"), []byte("\",\n  \"f:writeIDs\": [\n    \"w1@6\"\n  ]\n}"), 1)
	if !bytes.Equal(now, want) {
		t.Errorf("after publish:\n%s\nwant\n%s", now, want)
	}
}

// TestInlineIndexFold: the spec fixture has an inline index at t41 and a
// sidecar at t42. An index update lands in the sidecar and folds the
// inline index away; even a compare-and-set to a lower t is then what
// readers see.
func TestInlineIndexFold(t *testing.T) {
	dir := copyTree(t, filepath.Join(fixtures, "seed-dialect"))
	d, err := nsfs.Open(context.Background(), nsfs.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id := model.ID{Name: "mydb", Branch: "main"}
	rec, err := d.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	lower := model.RefValue("lower", 40)
	out, err := d.Update(ctx, id, model.Index, driver.IfEquals(*rec.Index), lower)
	if err != nil || !out.Applied {
		t.Fatalf("cas: %v %v", out, err)
	}
	got, err := d.Get(ctx, id)
	if err != nil || !got.Index.Equal(lower) {
		t.Fatalf("index after cas = %v (%v), want %v", got.Index, err, lower)
	}
	main, _ := os.ReadFile(filepath.Join(dir, "ns@v2", "mydb", "main.json"))
	if bytes.Contains(main, []byte("ledgerIndex")) {
		t.Errorf("inline index still in main file:\n%s", main)
	}
	if !got.Head.Equal(*rec.Head) {
		t.Errorf("head changed: %v", got.Head)
	}
}
