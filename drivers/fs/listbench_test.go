package fs_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"nameservice.dev/nameservice/driver"
	nsfs "nameservice.dev/nameservice/drivers/fs"
	"nameservice.dev/nameservice/internal/objstore"
)

// listSizes are the listing sizes of BenchmarkList: 1,000 and 10,000, and
// 100,000 when NS_BENCH_LIST_MAX asks for it.
func listSizes() []int {
	sizes := []int{1000, 10_000}
	if n, _ := strconv.Atoi(os.Getenv("NS_BENCH_LIST_MAX")); n >= 100_000 {
		sizes = append(sizes, 100_000)
	}
	return sizes
}

// BenchmarkList lists N records in pages of 100, as NameService.List does,
// beside the floor measured in the same run with the same parallelism:
// walk ns@v2 and read every file. The store is seeded with raw writes of
// valid ns@v2 files (copies of a record the driver created).
//
//	NS_BENCH_LIST_MAX=100000 go test -run '^$' -bench 'List$' -benchtime 1x ./drivers/fs/
func BenchmarkList(b *testing.B) {
	for _, l := range []nsfs.Config{{Layout: nsfs.LayoutB}, {Layout: nsfs.LayoutC}} {
		for _, n := range listSizes() {
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
	seedFS(b, d, dir, n)
	rawWalk(b, filepath.Join(dir, "ns@v2"), objstore.DefaultListParallel) // warm the page cache
	var list, raw, listCPU, rawCPU time.Duration
	b.ResetTimer()
	for range b.N {
		start, startCPU := time.Now(), cpuTime()
		files := rawWalk(b, filepath.Join(dir, "ns@v2"), objstore.DefaultListParallel)
		mid, midCPU := time.Now(), cpuTime()
		got := listPages(b, ctx, d)
		list += time.Since(mid)
		raw += mid.Sub(start)
		listCPU += cpuTime() - midCPU
		rawCPU += midCPU - startCPU
		if got != n || files < n {
			b.Fatalf("listed %d records, walked %d files; want %d", got, files, n)
		}
	}
	b.ReportMetric(float64(list.Milliseconds())/float64(b.N), "list-ms")
	b.ReportMetric(float64(raw.Milliseconds())/float64(b.N), "raw-ms")
	b.ReportMetric(float64(list)/float64(raw), "list/raw")
	// CPU time (user+system) is what the work costs; on a machine shared
	// with other loads it varies far less than wall time.
	b.ReportMetric(float64(listCPU.Milliseconds())/float64(b.N), "list-cpu-ms")
	b.ReportMetric(float64(rawCPU.Milliseconds())/float64(b.N), "raw-cpu-ms")
	b.ReportMetric(float64(listCPU)/float64(rawCPU), "cpu-list/raw")
	b.ReportMetric(maxRSSMB(), "maxrss-MB")
}

// listPages lists every record with a fresh driver over d's directory, in
// pages of 100, and returns how many it saw.
func listPages(b *testing.B, ctx context.Context, d *nsfs.Driver) int {
	n, tok := 0, ""
	for {
		p, err := d.List(ctx, driver.ListOptions{PageSize: 100, PageToken: tok})
		if err != nil {
			b.Fatal(err)
		}
		if len(p.Failed) > 0 {
			b.Fatal(p.Failed[0])
		}
		n += len(p.Records)
		if tok = p.NextPageToken; tok == "" {
			return n
		}
	}
}

// seedFS writes n records as copies of the files of one the driver
// creates, with the name changed.
func seedFS(b *testing.B, d *nsfs.Driver, dir string, n int) {
	tmpl := driver.ID{Name: "tmpl", Branch: "main"}
	if err := d.Create(context.Background(), driver.NewLedger(tmpl, 1)); err != nil {
		b.Fatal(err)
	}
	src := filepath.Join(dir, "ns@v2", "tmpl")
	ents, err := os.ReadDir(src)
	if err != nil {
		b.Fatal(err)
	}
	files := map[string]string{}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".json") {
			data, err := os.ReadFile(filepath.Join(src, e.Name()))
			if err != nil {
				b.Fatal(err)
			}
			files[e.Name()] = string(data)
		}
	}
	if err := os.RemoveAll(src); err != nil {
		b.Fatal(err)
	}
	for i := range n {
		name := fmt.Sprintf("ledger-%06d", i)
		sub := filepath.Join(dir, "ns@v2", name)
		if err := os.MkdirAll(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		for f, data := range files {
			if err := os.WriteFile(filepath.Join(sub, f), []byte(strings.ReplaceAll(data, `"tmpl`, `"`+name)), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
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

// maxRSSMB is the process's peak resident set so far, in MB.
func maxRSSMB() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Maxrss) / 1024
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
