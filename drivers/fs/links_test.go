package fs_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"nameservice.dev/nameservice/driver"
	nsfs "nameservice.dev/nameservice/drivers/fs"
	"nameservice.dev/nameservice/model"
)

// linkedStore returns a store holding a:main and z:main, and a record
// directory ns@v2/evil that is a symbolic link to a directory outside the
// root holding a valid record evil:main; outside is that directory.
func linkedStore(t *testing.T) (d *nsfs.Driver, root, outside string) {
	t.Helper()
	root, other := t.TempDir(), t.TempDir()
	d = open(t, root, nsfs.Config{})
	mustCreate(t, d, "a:main")
	mustCreate(t, d, "z:main")
	mustCreate(t, open(t, other, nsfs.Config{}), "evil:main")
	outside = filepath.Join(other, "ns@v2", "evil")
	if err := os.Symlink(outside, filepath.Join(root, "ns@v2", "evil")); err != nil {
		t.Fatal(err)
	}
	return d, root, outside
}

func wantLinkErr(t *testing.T, what string, err error, path string) {
	t.Helper()
	if !errors.Is(err, model.ErrInternal) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("%s: %v, want ErrInternal naming %s as a symbolic link", what, err, path)
	}
}

// TestSymlinkedRecordDir: reads and writes through a symlinked record
// directory are refused, naming it; nothing outside the root changes; List
// reports it in Page.Failed in its place and lists the others.
func TestSymlinkedRecordDir(t *testing.T) {
	ctx := context.Background()
	d, root, outside := linkedStore(t)
	link := filepath.Join(root, "ns@v2", "evil")
	before := files(t, outside)
	id := pid("evil:main")
	_, err := d.Get(ctx, id)
	wantLinkErr(t, "get", err, link)
	_, err = d.Update(ctx, id, model.Head, driver.IfAbove(), model.RefValue("x", 1))
	wantLinkErr(t, "update", err, link)
	wantLinkErr(t, "retract", d.Retract(ctx, id, time.Now()), link)
	wantLinkErr(t, "delete", d.Delete(ctx, id), link)
	wantLinkErr(t, "create", d.Create(ctx, model.NewLedger(pid("evil:dev"), 1)), link)
	if after := files(t, outside); !slices.Equal(before, after) {
		t.Errorf("files outside the root changed: %q -> %q", before, after)
	}
	page, err := d.List(ctx, driver.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range page.Records {
		ids = append(ids, r.ID.String())
	}
	if !slices.Equal(ids, []string{"a:main", "z:main"}) || len(page.Failed) != 1 {
		t.Fatalf("list: records %q, failed %v; want a:main and z:main, and the link failed", ids, page.Failed)
	}
	if page.Failed[0].Object != link {
		t.Errorf("failed object %q, want %q", page.Failed[0].Object, link)
	}
	wantLinkErr(t, "list", page.Failed[0], link)
}

// TestSymlinkedFile: a record file that is a symbolic link to a JSON file
// outside the root is not read or replaced: a push fails naming it, and the
// outside file keeps its bytes; List reports the record in Page.Failed.
func TestSymlinkedFile(t *testing.T) {
	ctx := context.Background()
	root, other := t.TempDir(), t.TempDir()
	d := open(t, root, nsfs.Config{})
	mustCreate(t, d, "db:main")
	mustCreate(t, open(t, other, nsfs.Config{}), "db:main")
	outsideFile := filepath.Join(other, "ns@v2", "db", "main.json")
	file := filepath.Join(root, "ns@v2", "db", "main.json")
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outsideFile, file); err != nil {
		t.Fatal(err)
	}
	was, _ := os.ReadFile(outsideFile)
	id := pid("db:main")
	_, err := d.Update(ctx, id, model.Head, driver.IfAbove(), model.RefValue("x", 1))
	wantLinkErr(t, "update", err, file)
	_, err = d.Get(ctx, id)
	wantLinkErr(t, "get", err, file)
	if now, _ := os.ReadFile(outsideFile); string(now) != string(was) {
		t.Errorf("the outside file changed")
	}
	if fi, err := os.Lstat(file); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
	page, err := d.List(ctx, driver.ListOptions{})
	if err != nil || len(page.Records) != 0 || len(page.Failed) != 1 {
		t.Fatalf("list: %v, %v", page, err)
	}
	wantLinkErr(t, "list", page.Failed[0], file)
}
