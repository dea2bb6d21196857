package remote_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/dynamodb"
	"nameservice.dev/nameservice/drivers/fs"
	"nameservice.dev/nameservice/drivers/mem"
	"nameservice.dev/nameservice/drivers/remote"
	"nameservice.dev/nameservice/internal/testenv"
	"nameservice.dev/nameservice/server"
)

// benchRounds is how many times a push benchmark alternates between the
// direct call and the call through the server.
const benchRounds = 5

// BenchmarkPushOverhead measures applied head publishes (PublishCommit)
// straight to a backend and through ns serve on a loopback listener in
// front of the same backend, in the same run: rounds alternate between
// the two, each writer (its own client, its own record) pushing the same
// number of times, and the figures are medians over the rounds. The server
// runs as ns serve does: a static token, an idempotency key on every push,
// a JSON log line per request. Reported: µs per push (wall time over all
// writers' pushes) each way, and their ratio.
//
//	scripts/testservers.sh start && eval "$(scripts/testservers.sh env)"
//	go test -run '^$' -bench PushOverhead -benchtime 2000x ./drivers/remote/
func BenchmarkPushOverhead(b *testing.B) {
	backends := []struct {
		name string
		open func(b *testing.B) driver.Driver
	}{
		{"mem", func(*testing.B) driver.Driver { return mem.NewStore().Open() }},
		{"fs", func(b *testing.B) driver.Driver {
			d, err := fs.Open(context.Background(), fs.Config{Dir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			return d
		}},
		{"dynamodb", openBenchTable},
	}
	for _, be := range backends {
		for _, writers := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/writers=%d", be.name, writers), func(b *testing.B) {
				backend := be.open(b)
				b.Cleanup(func() { _ = backend.Close() })
				url := serveBench(b, backend)
				direct := make([]*nameservice.NameService, writers)
				viaHTTP := make([]*nameservice.NameService, writers)
				for i := range writers {
					direct[i] = nameservice.New(backend)
					d, err := remote.Open(context.Background(), remote.Config{BaseURL: url, Token: benchToken})
					if err != nil {
						b.Fatal(err)
					}
					viaHTTP[i] = nameservice.New(d)
					b.Cleanup(func() { _ = d.Close() })
				}
				each := max(1, b.N/writers/benchRounds)
				run := pushRunner(b, writers, each)
				var d, h, ratio []float64
				b.ResetTimer()
				for r := range benchRounds {
					dr := run(direct, fmt.Sprintf("direct%d", r))
					hr := run(viaHTTP, fmt.Sprintf("http%d", r))
					d, h, ratio = append(d, dr), append(h, hr), append(ratio, hr/dr)
				}
				b.StopTimer()
				b.ReportMetric(median(d), "direct-µs/push")
				b.ReportMetric(median(h), "http-µs/push")
				b.ReportMetric(median(ratio), "ratio")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}

const benchToken = "bench-token"

// serveBench serves backend as ns serve does (a static token, JSON logs)
// on a loopback listener and returns its URL.
func serveBench(b *testing.B, backend driver.Driver) string {
	a, err := server.NewAuthenticator(server.AuthConfig{Tokens: []server.TokenEntry{
		{Name: "bench", SHA256: server.HashToken(benchToken), Read: []string{""}, Write: []string{""}},
	}})
	if err != nil {
		b.Fatal(err)
	}
	srv := server.New(nameservice.New(backend), server.Options{Auth: a,
		Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	hs := httptest.NewServer(srv)
	b.Cleanup(func() { _ = srv.Close(); hs.Close() })
	return hs.URL
}

// pushRunner returns a function that has every client create a record of
// its own (named after tag) and push its head each times, all at once, and
// returns the µs per push over all of them.
func pushRunner(b *testing.B, writers, each int) func(clients []*nameservice.NameService, tag string) float64 {
	return func(clients []*nameservice.NameService, tag string) float64 {
		ctx := context.Background()
		for i, ns := range clients {
			if err := ns.Init(ctx, fmt.Sprintf("bench-%s-%d", tag, i)); err != nil {
				b.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		start := time.Now()
		for i, ns := range clients {
			wg.Go(func() {
				id := fmt.Sprintf("bench-%s-%d", tag, i)
				for t := range each {
					out, err := ns.PublishCommit(ctx, id, int64(t+1), "c")
					if err != nil || !out.Applied {
						b.Errorf("push %s %d: %v %v", id, t+1, out, err)
						return
					}
				}
			})
		}
		wg.Wait()
		return float64(time.Since(start).Microseconds()) / float64(writers*each)
	}
}

func median(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}

// openBenchTable opens a new table on DynamoDB Local, deleted when the
// benchmark ends.
func openBenchTable(b *testing.B) driver.Driver {
	ctx := context.Background()
	cfg := dynamodb.Config{Table: "ns-bench-" + testenv.RandomHex(4), Region: "us-east-1",
		Endpoint: testenv.DynamoDBEndpoint(b), Credentials: testenv.Credentials}
	d, err := dynamodb.Open(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := d.Provision(ctx); err != nil {
		b.Fatal(err)
	}
	testenv.DropTable(b, d.Client(), cfg.Table)
	return d
}
