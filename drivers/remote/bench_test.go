package remote_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/fs"
	"nameservice.dev/nameservice/drivers/mem"
	"nameservice.dev/nameservice/drivers/remote"
	"nameservice.dev/nameservice/server"
)

// BenchmarkPush measures one applied PublishCommit straight to a backend
// and through ns serve's handler on a loopback listener in front of the
// same kind of backend, in the same run, and reports p50 and p99. The
// difference of the p50s is what HTTP adds. Run it with
//
//	go test -run '^$' -bench BenchmarkPush -benchtime 3000x ./drivers/remote/
func BenchmarkPush(b *testing.B) {
	backends := map[string]func(b *testing.B) driver.Driver{
		"mem": func(*testing.B) driver.Driver { return mem.NewStore().Open() },
		"fs": func(b *testing.B) driver.Driver {
			d, err := fs.Open(context.Background(), fs.Config{Dir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			return d
		},
	}
	for _, name := range []string{"mem", "fs"} {
		b.Run(name+"/direct", func(b *testing.B) { benchPush(b, backends[name](b)) })
		b.Run(name+"/http", func(b *testing.B) { benchPush(b, throughServer(b, backends[name](b))) })
	}
}

// throughServer serves backend on a loopback listener and returns an
// http:// client of it.
func throughServer(b *testing.B, backend driver.Driver) driver.Driver {
	srv := server.New(nameservice.New(backend), server.Options{NoAuth: true})
	hs := httptest.NewServer(srv)
	b.Cleanup(func() { _ = srv.Close(); hs.Close(); _ = backend.Close() })
	d, err := remote.Open(context.Background(), remote.Config{BaseURL: hs.URL})
	if err != nil {
		b.Fatal(err)
	}
	return d
}

func benchPush(b *testing.B, d driver.Driver) {
	ns := nameservice.New(d)
	defer ns.Close()
	ctx := context.Background()
	if err := ns.Init(ctx, "bench"); err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		out, err := ns.PublishCommit(ctx, "bench", int64(i+1), "c")
		if err != nil || !out.Applied {
			b.Fatalf("push %d: %v %v", i, out, err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	reportPercentiles(b, lat)
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Nanoseconds()) / 1e3 }
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}

// BenchmarkThroughput32 runs 32 clients pushing status CAS to their own
// records through the server (and straight to the backend, as the
// baseline), reporting requests per second.
func BenchmarkThroughput32(b *testing.B) {
	for _, via := range []string{"direct", "http"} {
		b.Run("mem/"+via, func(b *testing.B) {
			backend := driver.Driver(mem.NewStore().Open())
			open := func() driver.Driver { return backend }
			if via == "http" {
				srv := server.New(nameservice.New(backend), server.Options{NoAuth: true})
				hs := httptest.NewServer(srv)
				b.Cleanup(func() { _ = srv.Close(); hs.Close() })
				open = func() driver.Driver {
					d, err := remote.Open(context.Background(), remote.Config{BaseURL: hs.URL})
					if err != nil {
						b.Fatal(err)
					}
					return d
				}
			}
			var next atomic.Int64
			b.SetParallelism(max(1, 32/parallelism()))
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				ns := nameservice.New(open())
				ctx := context.Background()
				id := fmt.Sprintf("tp%d", next.Add(1))
				if err := ns.Init(ctx, id); err != nil {
					b.Error(err)
					return
				}
				cur := nameservice.StatusValue(1, "ready", nil)
				for pb.Next() {
					nv := nameservice.StatusValue(cur.V+1, "ready", nil)
					out, err := ns.PushStatus(ctx, id, cur, nv)
					if err != nil || !out.Applied {
						b.Errorf("push: %v %v", out, err)
						return
					}
					cur = nv
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
		})
	}
}

func parallelism() int { return max(1, testingGOMAXPROCS()) }

func testingGOMAXPROCS() int { return runtime.GOMAXPROCS(0) }
