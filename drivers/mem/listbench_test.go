package mem_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/mem"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/model"
)

// BenchmarkList lists N ledgers (NS_BENCH_LIST_SIZES, default 1000,10000)
// in pages of 100, beside the floor of an in-memory listing measured in the
// same run: copying each of the same records, in ID order, out of a slice
// that already holds them (no lock, no filter, no sort). Its rss-MB is the
// peak resident set of this process during one listing, the store itself
// included (a mem store lives in its process).
//
//	NS_BENCH_LIST_SIZES=1000,10000,100000 go test -run '^$' -bench 'List$' -benchtime 1x ./drivers/mem/
func BenchmarkList(b *testing.B) {
	for _, n := range testenv.ListSizes(b) {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) { benchList(b, n) })
	}
}

func benchList(b *testing.B, n int) {
	ctx := context.Background()
	d := mem.NewStore().Open()
	recs := make([]*model.Record, n)
	for i := range n {
		recs[i] = model.NewLedger(model.ID{Name: fmt.Sprintf("ledger-%06d", i), Branch: "main"}, 1)
		if err := d.Create(ctx, recs[i]); err != nil {
			b.Fatal(err)
		}
	}
	opts := driver.ListOptions{PageSize: 100}
	list1 := func() {
		got, failed, err := testenv.ListAll(ctx, d, opts)
		if err != nil || got != n || failed != 0 {
			b.Fatalf("listed %d records and %d failures, want %d (%v)", got, failed, n, err)
		}
	}
	rss, store := testenv.PeakRSS(b, list1)
	// Each side has run once untimed (the listing above), so that both
	// find the heap grown to hold a listing's copies: without this the
	// listing alone paid for the fresh memory, page faults and zeroing,
	// that 100,000 copies need (~100 MB), and the floor reused it after
	// the collection between them.
	copyAll(recs, 100)
	var list, raw []time.Duration
	for b.Loop() {
		runtime.GC() // the seeding's garbage is no part of either
		start := time.Now()
		list1()
		list = append(list, time.Since(start))
		runtime.GC()
		mid := time.Now()
		if got := copyAll(recs, 100); got != n {
			b.Fatalf("copied %d records, want %d", got, n)
		}
		raw = append(raw, time.Since(mid))
	}
	testenv.ReportList(b, list, raw, rss)
	// The store lives in this process: what it held before the listing.
	b.ReportMetric(store, "store-MB")
}

// copyAll is the floor: a copy of every record of recs, in pages of size
// as a listing hands them out. It returns how many it copied.
func copyAll(recs []*model.Record, size int) int {
	n := 0
	for len(recs) > 0 {
		page := make([]*model.Record, 0, size)
		for _, r := range recs[:min(size, len(recs))] {
			page = append(page, r.Clone())
		}
		n += len(page)
		recs = recs[len(page):]
	}
	return n
}
