package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/fs"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/model"
)

// BenchmarkServeListing serves a file store of N ledgers (the sizes of
// NS_BENCH_LIST_SIZES, default 1000,10000) with `ns serve` in a process of
// its own, and measures in one run three ways of reading all of them: the
// Fluree snapshot (one answer), GET /ns/v1/records page after page (pages
// of 1,000, through the http:// driver), and the floor: the same listing
// straight from the store in this process, no HTTP. Times are medians of
// three runs; rss-MB is the server's peak resident set during them (its
// high-water mark reset before), raw-rss-MB that of `ns list` reading the
// store directly in a process of its own:
//
//	NS_BENCH_LIST_SIZES=1000,100000 go test -run '^$' -bench ServeListing -benchtime 1x ./server/
func BenchmarkServeListing(b *testing.B) {
	for _, n := range testenv.ListSizes(b) {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			dir := b.TempDir()
			seedFiles(b, dir, n)
			url := "file://" + dir
			srv := testenv.ServeCLI(b, url, "--insecure-no-auth")
			client := mustRemoteB(b, srv.URL)
			store, err := fs.Open(context.Background(), fs.Config{Dir: dir})
			if err != nil {
				b.Fatal(err)
			}
			if got := snapshotLedgers(b, srv.URL); got != n {
				b.Fatalf("snapshot holds %d ledgers, want %d", got, n)
			}
			cliRSS := testenv.ListCLI(b, n, url, "--page-size", "1000")
			b.ResetTimer()
			for range b.N {
				snap, snapRSS := medianOf3(b, srv, func() { snapshotBytes(b, srv.URL) })
				recs, recsRSS := medianOf3(b, srv, func() { listAll(b, client, n) })
				raw, _ := medianOf3(b, nil, func() { listAll(b, store, n) })
				b.ReportMetric(snap, "snapshot-ms")
				b.ReportMetric(snapRSS, "snapshot-rss-MB")
				b.ReportMetric(recs, "records-ms")
				b.ReportMetric(recsRSS, "records-rss-MB")
				b.ReportMetric(raw, "raw-ms")
				b.ReportMetric(cliRSS, "raw-rss-MB")
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}

// medianOf3 runs f three times and returns the median time in ms and, when
// srv is set, the server's peak RSS during the three in MB.
func medianOf3(b *testing.B, srv *testenv.ServeProcess, f func()) (ms, rssMB float64) {
	var times []time.Duration
	runs := func() {
		for range 3 {
			start := time.Now()
			f()
			times = append(times, time.Since(start))
		}
	}
	if srv == nil {
		runs()
	} else {
		rssMB, _ = srv.PeakRSS(b, runs)
	}
	slices.Sort(times)
	return float64(times[1].Microseconds()) / 1000, rssMB
}

// seedFiles writes n ledgers with a commit each into a file store at dir,
// as copies of the files of one the driver creates (raw writes: far
// quicker than n creates, each with its fsyncs).
func seedFiles(b *testing.B, dir string, n int) {
	ctx := context.Background()
	d, err := fs.Open(ctx, fs.Config{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	tmpl := model.NewLedger(model.ID{Name: "tmpl", Branch: "main"}, 1_700_000_000)
	*tmpl.Head = model.RefValue(testenv.CID("head"), 1)
	testenv.SeedCopies(b, d, dir, tmpl, "l%06d", n)
}

// snapshotBytes reads the whole snapshot and returns its size.
func snapshotBytes(tb testing.TB, base string) int {
	resp, err := http.Get(base + "/v1/fluree/nameservice/snapshot")
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil || resp.StatusCode != 200 {
		tb.Fatalf("snapshot: %d, %v", resp.StatusCode, err)
	}
	return int(n)
}

// snapshotLedgers decodes the snapshot and returns how many ledgers it has.
func snapshotLedgers(tb testing.TB, base string) int {
	resp, err := http.Get(base + "/v1/fluree/nameservice/snapshot")
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	var snap struct{ Ledgers []json.RawMessage }
	if err := json.NewDecoder(resp.Body).Decode(&snap); err != nil {
		tb.Fatal(err)
	}
	return len(snap.Ledgers)
}

// listAll lists every record of d in pages of 1,000 and fails unless there
// are want.
func listAll(tb testing.TB, d driver.Driver, want int) {
	n, failed, err := testenv.ListAll(context.Background(), d, driver.ListOptions{PageSize: 1000})
	if err != nil || failed != 0 || n != want {
		tb.Fatalf("list: %d records, %d failed, %v; want %d", n, failed, err, want)
	}
}
