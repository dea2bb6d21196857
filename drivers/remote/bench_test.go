package remote_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/server/auth"
)

// benchRounds is how many times a push benchmark alternates between the
// direct call and the call through the server.
const benchRounds = 20

// BenchmarkPushOverhead measures applied head publishes (PublishCommit)
// three ways in the same run: straight to a backend; through bareServe, the
// library's push behind the thinnest HTTP server, in a process of its own
// (the floor: what any HTTP hop between two processes costs here); and
// through `ns serve`, also in a process of its own, as deployed. Each runs
// in front of the same kind of backend. Rounds alternate between the three,
// each writer (its own client, its own record) pushing the same number of
// times, and the figures are medians over the rounds. `ns serve` runs with
// a static token and logs a JSON line per request; every push carries an
// idempotency key. Reported: µs per push (wall time over all the writers'
// pushes) each way; the ratios of `ns serve` (ratio) and of the floor
// (bare-ratio) to the direct call, and of `ns serve` to the floor
// (over-bare); and CPU time per push: this process's for the direct calls,
// the servers' for the others.
//
//	scripts/testservers.sh start && eval "$(scripts/testservers.sh env)"
//	go test -run '^$' -bench PushOverhead -benchtime 2000x ./drivers/remote/
func BenchmarkPushOverhead(b *testing.B) {
	for _, be := range []string{"mem", "fs", "dynamodb"} {
		for _, writers := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/writers=%d", be, writers), func(b *testing.B) {
				backend, url := openBenchBackend(b, be)
				srv := testenv.ServeCLI(b, url, "--tokens", tokenFile(b))
				bare := startBare(b, url)
				ways := []*pushWay{
					{name: "direct", cpu: selfCPU},
					{name: "bare", cpu: func() time.Duration { return serverCPU(bare) }},
					{name: "http", cpu: func() time.Duration { return serverCPU(srv) }},
				}
				for range writers {
					ways[0].clients = append(ways[0].clients, nsPusher{nameservice.New(backend)})
					ways[1].clients = append(ways[1].clients, bareClient(bare.URL))
					d, err := remote.Open(context.Background(), remote.Config{BaseURL: srv.URL, Token: benchToken})
					if err != nil {
						b.Fatal(err)
					}
					b.Cleanup(func() { _ = d.Close() })
					ways[2].clients = append(ways[2].clients, nsPusher{nameservice.New(d)})
				}
				each := max(1, b.N/writers/benchRounds)
				b.ResetTimer()
				// Ratios are taken within a round, then their median: load
				// that comes and goes falls on both sides of each.
				var ratio, bareRatio, overBare []float64
				for r := range benchRounds {
					for _, w := range ways {
						w.round(b, fmt.Sprintf("%s%d", w.name, r), each)
					}
					direct, bare, http := ways[0].last(), ways[1].last(), ways[2].last()
					ratio, bareRatio, overBare = append(ratio, http/direct), append(bareRatio, bare/direct), append(overBare, http/bare)
				}
				b.StopTimer()
				pushes := float64(benchRounds * writers * each)
				for _, w := range ways {
					b.ReportMetric(median(w.us), w.name+"-µs/push")
					// CPU per push (inits included: one per writer and
					// round), however busy the machine is.
					b.ReportMetric(float64(w.spent.Microseconds())/pushes, w.name+"-cpu-µs/push")
				}
				b.ReportMetric(median(ratio), "ratio")
				b.ReportMetric(median(bareRatio), "bare-ratio")
				b.ReportMetric(median(overBare), "over-bare")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}

// pushWay is one way of pushing (direct, bare HTTP, ns serve): its clients,
// one per writer; where its CPU time is read; and what its rounds took.
type pushWay struct {
	name    string
	clients []pusher
	cpu     func() time.Duration
	spent   time.Duration
	us      []float64 // µs per push, a figure per round
}

// round has every client create a record of its own (named after tag) and
// push its head each times, all at once, and records the µs per push over
// all of them and the CPU time spent.
func (w *pushWay) round(b *testing.B, tag string, each int) {
	ctx := context.Background()
	cpu := w.cpu()
	defer func() { w.spent += w.cpu() - cpu }()
	for i, c := range w.clients {
		if err := c.Init(ctx, fmt.Sprintf("bench-%s-%d", tag, i)); err != nil {
			b.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	start := time.Now()
	for i, c := range w.clients {
		wg.Go(func() {
			id := fmt.Sprintf("bench-%s-%d", tag, i)
			for t := range each {
				if err := c.Push(ctx, id, int64(t+1)); err != nil {
					b.Errorf("%s: push %s %d: %v", w.name, id, t+1, err)
					return
				}
			}
		})
	}
	wg.Wait()
	w.us = append(w.us, float64(time.Since(start).Microseconds())/float64(len(w.clients)*each))
}

func (w *pushWay) last() float64 { return w.us[len(w.us)-1] }

// pusher creates records and pushes their heads, applied.
type pusher interface {
	Init(ctx context.Context, id string) error
	Push(ctx context.Context, id string, t int64) error
}

type nsPusher struct{ ns *nameservice.NameService }

func (p nsPusher) Init(ctx context.Context, id string) error { return p.ns.Init(ctx, id) }

func (p nsPusher) Push(ctx context.Context, id string, t int64) error {
	out, err := p.ns.PublishCommit(ctx, id, t, "c")
	if err == nil && !out.Applied {
		err = fmt.Errorf("not applied: current %v", out.Current)
	}
	return err
}

// bareClient pushes through bareServe at base with a client (and so a
// connection) of its own.
type bareClient string

func (c bareClient) Init(ctx context.Context, id string) error {
	return c.post(ctx, "/init/"+neturl.PathEscape(id))
}

func (c bareClient) Push(ctx context.Context, id string, t int64) error {
	return c.post(ctx, "/push/"+neturl.PathEscape(id)+"/"+strconv.FormatInt(t, 10))
}

func (c bareClient) post(ctx context.Context, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, string(c)+path, nil)
	if err != nil {
		return err
	}
	resp, err := bareHTTP.Do(req)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s: %s", resp.Status, body)
	}
	return err
}

// bareHTTP keeps a connection per writer, as the http:// driver's clients
// each do.
var bareHTTP = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

const benchToken = "bench-token"

// tokenFile writes a token file granting benchToken everything.
func tokenFile(b *testing.B) string {
	f := filepath.Join(b.TempDir(), "tokens.json")
	body := `{"tokens":[{"name":"bench","sha256":"` + auth.HashToken(benchToken) + `","read":[""],"write":[""]}]}`
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

// serverCPU returns the CPU time (user and system) server p has used so
// far, from /proc/PID/stat; 0 where that cannot be read.
func serverCPU(p *testenv.ServeProcess) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p.Cmd.Process.Pid) + "/stat")
	if err != nil {
		return 0
	}
	// The fields after the command name (which may hold spaces) start
	// after the last ')': state is field 3, utime and stime 14 and 15.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	// Clock ticks are 1/100 s on Linux (USER_HZ).
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// TestBareServe checks the floor BenchmarkPushOverhead holds ns serve
// against: it creates a record, applies a push, and refuses a stale one.
func TestBareServe(t *testing.T) {
	c := bareClient(startBare(t, "mem://").URL)
	ctx := context.Background()
	if err := c.Init(ctx, "floor"); err != nil {
		t.Fatal(err)
	}
	if err := c.Push(ctx, "floor", 2); err != nil {
		t.Fatalf("push 2: %v", err)
	}
	if err := c.Push(ctx, "floor", 1); err == nil || !strings.Contains(err.Error(), "409") {
		t.Fatalf("stale push 1: %v, want 409", err)
	}
}
