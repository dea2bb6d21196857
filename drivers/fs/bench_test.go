package fs_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"nameservice.dev/nameservice/driver"
	nsfs "nameservice.dev/nameservice/drivers/fs"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// BenchmarkPushVsRaw times a status push (lock, read, compare, encode,
// temp file, fsync, rename, directory fsync, unlock) next to the bare
// write+fsync+rename+directory-fsync of the same bytes, interleaved in one
// run, and reports their ratio as push/raw.
//
//	go test -run '^$' -bench PushVsRaw ./drivers/fs/
func BenchmarkPushVsRaw(b *testing.B) {
	for _, l := range []nsfs.Config{{Layout: jsonld.LayoutB}, {Layout: jsonld.LayoutC}} {
		b.Run("layout="+l.Layout.String(), func(b *testing.B) { benchPushVsRaw(b, l) })
	}
}

func benchPushVsRaw(b *testing.B, opts nsfs.Config) {
	ctx := context.Background()
	opts.Dir = b.TempDir()
	d, err := nsfs.Open(ctx, opts)
	if err != nil {
		b.Fatal(err)
	}
	id := model.ID{Name: "bench", Branch: "main"}
	if err := d.Create(ctx, model.NewLedger(id, 0)); err != nil {
		b.Fatal(err)
	}
	file := "main.json"
	if opts.Layout == jsonld.LayoutC {
		file = "main.status.json"
	}
	data, err := os.ReadFile(filepath.Join(opts.Dir, "ns@v2", "bench", file))
	if err != nil {
		b.Fatal(err)
	}
	rawPath := filepath.Join(opts.Dir, "raw.json")
	var push, raw time.Duration
	b.ResetTimer()
	for i := range b.N {
		next := model.Value{V: int64(i + 2), Payload: model.Object{"state": "ready"}}
		start := time.Now()
		if _, err := d.Update(ctx, id, model.Status, driver.IfAbove(), next); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		if err := rawWrite(rawPath, data); err != nil {
			b.Fatal(err)
		}
		push += mid.Sub(start)
		raw += time.Since(mid)
	}
	b.ReportMetric(float64(push.Nanoseconds())/float64(b.N), "push-ns/op")
	b.ReportMetric(float64(raw.Nanoseconds())/float64(b.N), "raw-ns/op")
	b.ReportMetric(float64(push)/float64(raw), "push/raw")
}

// rawWrite is the floor of a crash-safe replace: write a temp file, fsync
// it, rename it over path, fsync the directory.
func rawWrite(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer dir.Close()
	return dir.Sync()
}

// BenchmarkConcurrentWriters measures pushes per second of one record with
// one writer, and with two writers of different concerns at once (each its
// own client, as separate processes would be). In layout C head, index and
// status have files and locks of their own; in layout B head and status
// share the main file and its lock.
//
//	go test -run '^$' -bench ConcurrentWriters ./drivers/fs/
func BenchmarkConcurrentWriters(b *testing.B) {
	cases := []struct {
		name     string
		layout   nsfs.Config
		concerns []model.Concern
	}{
		{"C/one-writer-head", nsfs.Config{Layout: jsonld.LayoutC}, []model.Concern{model.Head}},
		{"C/head+index", nsfs.Config{Layout: jsonld.LayoutC}, []model.Concern{model.Head, model.Index}},
		{"C/head+status", nsfs.Config{Layout: jsonld.LayoutC}, []model.Concern{model.Head, model.Status}},
		{"B/one-writer-head", nsfs.Config{Layout: jsonld.LayoutB}, []model.Concern{model.Head}},
		{"B/head+index", nsfs.Config{Layout: jsonld.LayoutB}, []model.Concern{model.Head, model.Index}},
		{"B/head+status", nsfs.Config{Layout: jsonld.LayoutB}, []model.Concern{model.Head, model.Status}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) { benchWriters(b, c.layout, c.concerns) })
	}
}

func benchWriters(b *testing.B, opts nsfs.Config, concerns []model.Concern) {
	ctx := context.Background()
	opts.Dir = b.TempDir()
	id := model.ID{Name: "bench", Branch: "main"}
	setup, err := nsfs.Open(ctx, opts)
	if err != nil {
		b.Fatal(err)
	}
	if err := setup.Create(ctx, model.NewLedger(id, 0)); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for _, c := range concerns {
		d, err := nsfs.Open(ctx, opts)
		if err != nil {
			b.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range b.N {
				next := model.RefValue("a"+strconv.Itoa(i), int64(i+1))
				if c == model.Status {
					next = model.Value{V: int64(i + 2), Payload: model.Object{"state": "ready"}}
				}
				if _, err := d.Update(ctx, id, c, driver.IfAbove(), next); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	pushes := float64(b.N*len(concerns)) / elapsed.Seconds()
	raw := rawWriters(b, len(concerns), b.N)
	b.ReportMetric(pushes, "pushes/s")
	b.ReportMetric(raw, "raw-pushes/s")
	b.ReportMetric(pushes/raw, "pushes/raw")
}

// rawWriters is the baseline of benchWriters: as many goroutines, each
// doing n times the syscalls of a push (write a temp file, fsync, rename,
// fsync the directory) on a file of its own, in one directory. It shows
// what the disk allows for that many concurrent writers.
func rawWriters(b *testing.B, writers, n int) float64 {
	dir := b.TempDir()
	data := make([]byte, 400)
	start := time.Now()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n {
				if err := rawWrite(filepath.Join(dir, "f"+strconv.Itoa(w)+".json"), data); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return float64(writers*n) / time.Since(start).Seconds()
}
