package fs_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"nameservice.dev/nameservice/driver"
	nsfs "nameservice.dev/nameservice/drivers/fs"
	"nameservice.dev/nameservice/internal/objstore"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// BenchmarkList lists N records (NS_BENCH_LIST_SIZES, default 1000,10000)
// in pages of 100, as NameService.List does, beside the floor measured in
// the same run with the same parallelism: walk ns@v2 and read every file.
// The store is seeded with raw writes of valid ns@v2 files (copies of a
// record the driver created). rss-MB is the peak resident set of
// `ns list --page-size 100` over the same directory, in a process of its
// own.
//
//	NS_BENCH_LIST_SIZES=1000,10000,100000 go test -run '^$' -bench 'List$' -benchtime 1x ./drivers/fs/
func BenchmarkList(b *testing.B) {
	for _, l := range []nsfs.Config{{Layout: jsonld.LayoutB}, {Layout: jsonld.LayoutC}} {
		for _, n := range testenv.ListSizes(b) {
			b.Run(fmt.Sprintf("layout=%s/n=%d", l.Layout, n), func(b *testing.B) { benchList(b, l, n) })
		}
	}
}

func benchList(b *testing.B, opts nsfs.Config, n int) {
	ctx := context.Background()
	dir := b.TempDir()
	opts.Dir = dir
	d, err := nsfs.Open(ctx, opts)
	if err != nil {
		b.Fatal(err)
	}
	testenv.SeedCopies(b, d, dir, model.NewLedger(model.ID{Name: "tmpl", Branch: "main"}, 1), "ledger-%06d", n)
	root := filepath.Join(dir, "ns@v2")
	// The CLI's listing, first, also warms the page cache for both.
	cliRSS := testenv.ListCLI(b, n, "file://"+dir+"?layout="+opts.Layout.String(), "--page-size", "100")
	var list, raw []time.Duration
	for b.Loop() {
		start := time.Now()
		files := rawWalk(b, root, objstore.DefaultListParallel)
		mid := time.Now()
		got, failed, err := testenv.ListAll(ctx, d, driver.ListOptions{PageSize: 100})
		list = append(list, time.Since(mid))
		raw = append(raw, mid.Sub(start))
		if err != nil || failed != 0 || got != n || files < n {
			b.Fatalf("listed %d records and %d failures, walked %d files; want %d (%v)", got, failed, files, n, err)
		}
	}
	testenv.ReportList(b, list, raw, cliRSS)
}

// rawWalk is the floor of a listing: walk root and read every file, par
// at a time. It returns the files read.
func rawWalk(b *testing.B, root string, par int) int {
	var paths []string
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			paths = append(paths, p)
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for _, p := range paths {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if _, err := os.ReadFile(p); err != nil {
				b.Error(err)
			}
		}()
	}
	wg.Wait()
	return len(paths)
}
