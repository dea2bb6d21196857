package fs

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/model"
)

// TestDirCache: a large directory's entries are kept between pages only
// once it has been still for racyWindow, and a record created after a
// page that cached them is listed by the pages that follow.
func TestDirCache(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d, err := Open(ctx, Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	n := minCachedDir + 10
	for i := range n {
		if err := d.Create(ctx, model.NewLedger(model.ID{Name: fmt.Sprintf("l%04d", i), Branch: "main"}, 1)); err != nil {
			t.Fatal(err)
		}
	}
	top := filepath.Join(dir, "ns@v2")
	cached := func() bool { return d.dirs.Contains(top) }
	page := func(tok string) *driver.Page {
		t.Helper()
		p, err := d.List(ctx, driver.ListOptions{PageSize: 100, PageToken: tok})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if page("").NextPageToken == "" || cached() {
		t.Fatal("a directory written just now was cached")
	}
	time.Sleep(racyWindow + 100*time.Millisecond)
	p := page("")
	if !cached() {
		t.Fatal("a still directory was not cached")
	}
	// A record after the first page, created once the cache holds the
	// directory, is in a later page.
	late := model.ID{Name: "l9999", Branch: "main"}
	if err := d.Create(ctx, model.NewLedger(late, 1)); err != nil {
		t.Fatal(err)
	}
	seen := len(p.Records)
	found := false
	for p.NextPageToken != "" {
		p = page(p.NextPageToken)
		for _, r := range p.Records {
			found = found || r.ID == late
		}
		seen += len(p.Records)
	}
	if !found || seen != n+1 {
		t.Fatalf("listed %d records (want %d), the late one %v", seen, n+1, found)
	}
}
