package docstore

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/layout"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// The benchmarks run on DynamoDB Local and time each driver operation next
// to the raw docstore call it builds on, alternating the two in one loop
// over one collection, and report p50/p99 of each (in ms) and the ratios
// driver/raw. Run them with
//
//	go test -run '^$' -bench . -benchtime 2000x ./drivers/docstore/

// BenchmarkPush compares a monotonic head publish (Update: a Replace of
// the head file on the revision cached from the last push) with a raw
// Replace of another document on its revision.
func BenchmarkPush(b *testing.B) {
	d, ctx := benchDriver(b)
	id := benchLedger(b, d)
	raw := &document{Key: "bench/raw-" + testenv.RandomHex(4), Data: []byte("{}")}
	if err := d.coll.Create(ctx, raw); err != nil {
		b.Fatalf("raw document: %v", err)
	}
	next := func(i int) model.Value { return model.RefValue("c"+strconv.Itoa(i+1), int64(i+1)) }
	testenv.BenchVsRaw(b, "push", func(i int) {
		out, err := d.Update(ctx, id, model.Head, driver.IfAbove(), next(i))
		if err != nil || !out.Applied {
			b.Fatalf("push: %v %v", out, err)
		}
	}, "raw-replace", func(i int) {
		raw.Data = []byte(`{"t":` + strconv.Itoa(i) + `}`)
		if err := d.coll.Replace(ctx, raw); err != nil { // sets raw's new revision
			b.Fatalf("raw Replace: %v", err)
		}
	})
}

// BenchmarkLookup compares Get (the record's files read in parallel, two
// in layout B) with a raw Get of one document.
func BenchmarkLookup(b *testing.B) {
	d, ctx := benchDriver(b)
	id := benchLedger(b, d)
	files, err := layout.Files(jsonld.LayoutB, id)
	if err != nil {
		b.Fatal(err)
	}
	testenv.BenchVsRaw(b, "lookup", func(int) {
		if _, err := d.Get(ctx, id); err != nil {
			b.Fatal(err)
		}
	}, "raw-get", func(int) {
		if err := d.coll.Get(ctx, &document{Key: files[0].Key}); err != nil {
			b.Fatalf("raw Get: %v", err)
		}
	})
}

func benchDriver(b *testing.B) (*Driver, context.Context) {
	d, err := openURL(context.Background(), dynamoURL(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = d.Close() })
	return d, context.Background()
}

func benchLedger(b *testing.B, d *Driver) model.ID {
	id, _ := model.ParseID("bench" + testenv.RandomHex(4) + "/db")
	if err := d.Create(context.Background(), model.NewLedger(id, 1)); err != nil {
		b.Fatal(err)
	}
	return id
}

// BenchmarkPushContended has four independent clients publish increasing
// heads to one record at once (each t from a shared counter, so most
// publishes stay applicable and must retry on revision conflicts), and
// reports the applied publishes per second of the record.
func BenchmarkPushContended(b *testing.B) {
	const clients = 4
	d, ctx := benchDriver(b)
	id := benchLedger(b, d)
	var next, applied atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for range clients {
		c, _ := benchDriver(b)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Load() < int64(b.N) {
				t := next.Add(1)
				out, err := c.Update(ctx, id, model.Head, driver.IfAbove(), model.RefValue("c", t))
				if err != nil {
					b.Error(err)
					return
				}
				if out.Applied {
					applied.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(applied.Load())/time.Since(start).Seconds(), "applied/s")
	b.ReportMetric(float64(applied.Load())/float64(next.Load()), "applied-fraction")
	b.ReportMetric(0, "ns/op")
}
