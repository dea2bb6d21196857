package remote_test

import (
	"context"
	"fmt"
	neturl "net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
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
const benchRounds = 20

// BenchmarkPushOverhead measures applied head publishes (PublishCommit)
// straight to a backend and through `ns serve` (in a process of its own, as
// deployed) in front of the same kind of backend, in the same run: rounds
// alternate between the two, each writer (its own client, its own record)
// pushing the same number of times, and the figures are medians over the
// rounds. The server runs with a static token and logs a JSON line per
// request; every push carries an idempotency key. Reported: µs per push
// (wall time over all the writers' pushes) each way, their ratio, and the
// server process's CPU time per push.
//
//	scripts/testservers.sh start && eval "$(scripts/testservers.sh env)"
//	go test -run '^$' -bench PushOverhead -benchtime 2000x ./drivers/remote/
func BenchmarkPushOverhead(b *testing.B) {
	for _, be := range []string{"mem", "fs", "dynamodb"} {
		for _, writers := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/writers=%d", be, writers), func(b *testing.B) {
				backend, url := openBenchBackend(b, be)
				srv := testenv.ServeCLI(b, url, "--tokens", tokenFile(b))
				direct := make([]*nameservice.NameService, writers)
				viaHTTP := make([]*nameservice.NameService, writers)
				for i := range writers {
					direct[i] = nameservice.New(backend)
					d, err := remote.Open(context.Background(), remote.Config{BaseURL: srv.URL, Token: benchToken})
					if err != nil {
						b.Fatal(err)
					}
					viaHTTP[i] = nameservice.New(d)
					b.Cleanup(func() { _ = d.Close() })
				}
				each := max(1, b.N/writers/benchRounds)
				run := pushRunner(b, writers, each)
				var d, h, ratio []float64
				var serverCPU, directCPU time.Duration
				b.ResetTimer()
				for r := range benchRounds {
					own := selfCPU()
					dr := run(direct, fmt.Sprintf("direct%d", r))
					directCPU += selfCPU() - own
					cpu := srv.CPUTime()
					hr := run(viaHTTP, fmt.Sprintf("http%d", r))
					serverCPU += srv.CPUTime() - cpu
					d, h, ratio = append(d, dr), append(h, hr), append(ratio, hr/dr)
				}
				b.StopTimer()
				b.ReportMetric(median(d), "direct-µs/push")
				b.ReportMetric(median(h), "http-µs/push")
				b.ReportMetric(median(ratio), "ratio")
				// CPU per push (inits included: one per writer and round),
				// however busy the machine is: this process's for the direct
				// pushes, the server's for those through it.
				pushes := float64(benchRounds * writers * each)
				b.ReportMetric(float64(directCPU.Microseconds())/pushes, "direct-cpu-µs/push")
				b.ReportMetric(float64(serverCPU.Microseconds())/pushes, "server-cpu-µs/push")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}

const benchToken = "bench-token"

// tokenFile writes a token file granting benchToken everything.
func tokenFile(b *testing.B) string {
	f := filepath.Join(b.TempDir(), "tokens.json")
	body := `{"tokens":[{"name":"bench","sha256":"` + server.HashToken(benchToken) + `","read":[""],"write":[""]}]}`
	if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
		b.Fatal(err)
	}
	return f
}

// openBenchBackend opens a backend of kind for the direct pushes, and
// returns the URL under which ns serve opens the same kind: for mem a
// store of its own, for fs the same directory, for DynamoDB Local the same
// new table (deleted when the benchmark ends).
func openBenchBackend(b *testing.B, kind string) (driver.Driver, string) {
	ctx := context.Background()
	var d driver.Driver
	var url string
	switch kind {
	case "mem":
		d, url = mem.NewStore().Open(), "mem://"
	case "fs":
		dir := b.TempDir()
		fd, err := fs.Open(ctx, fs.Config{Dir: dir})
		if err != nil {
			b.Fatal(err)
		}
		d, url = fd, "file://"+dir
	case "dynamodb":
		endpoint := testenv.DynamoDBEndpoint(b)
		cfg := dynamodb.Config{Table: "ns-bench-" + testenv.RandomHex(4), Region: "us-east-1",
			Endpoint: endpoint, Credentials: testenv.Credentials}
		dd, err := dynamodb.Open(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		if err := dd.Provision(ctx); err != nil {
			b.Fatal(err)
		}
		testenv.DropTable(b, dd.Client(), cfg.Table)
		d, url = dd, "dynamodb://"+cfg.Table+"?region=us-east-1&endpoint="+neturl.QueryEscape(endpoint)
	}
	b.Cleanup(func() { _ = d.Close() })
	return d, url
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

// selfCPU returns the CPU time (user and system) this process has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
