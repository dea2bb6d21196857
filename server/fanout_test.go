package server_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"nameservice.dev/nameservice/drivers/dynamodb"
	"nameservice.dev/nameservice/internal/testing/faultproxy"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/server"
)

// fanoutRates serves, for each of levels, a DynamoDB Local table of its own
// (with its stream, or without one so that the server polls every 200 ms)
// through a counting proxy, opens that many event streams on it (half
// /ns/v1/watch, half Fluree's events), and returns the backend requests
// per second of each, counted over the same window once every stream is
// open and synced: side by side, so that a machine's load weighs on every
// level alike.
func fanoutRates(tb testing.TB, stream bool, levels []int, window time.Duration) []float64 {
	proxies := make([]*faultproxy.Proxy, len(levels))
	for i, n := range levels {
		proxies[i] = fanoutServer(tb, stream, n)
	}
	time.Sleep(window / 4) // let the streams' own snapshots settle
	before := make([]int64, len(levels))
	for i, p := range proxies {
		before[i] = p.Count(faultproxy.Pass)
	}
	time.Sleep(window)
	rates := make([]float64, len(levels))
	for i, p := range proxies {
		rates[i] = float64(p.Count(faultproxy.Pass)-before[i]) / window.Seconds()
	}
	return rates
}

// fanoutServer serves a new table through a counting proxy, with streams
// event streams open on it, and returns the proxy.
func fanoutServer(tb testing.TB, stream bool, streams int) *faultproxy.Proxy {
	endpoint := testenv.DynamoDBEndpoint(tb)
	proxy, err := faultproxy.Start(faultproxy.Config{Target: endpoint})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = proxy.Close() })
	ctx := context.Background()
	table := "ns-fanout-" + testenv.RandomHex(4)
	d, err := dynamodb.Open(ctx, dynamodb.Config{Table: table, Region: "us-east-1", Endpoint: proxy.URL(), Credentials: testenv.Credentials})
	if err != nil {
		tb.Fatal(err)
	}
	in := dynamodb.CreateTableInput(table)
	if !stream {
		in.StreamSpecification = nil
	}
	// A name of its own: when it exists already, a retry of this very
	// request (the first timed out on a loaded machine) made it.
	if _, err := d.Client().CreateTable(ctx, in); err != nil && !errors.As(err, new(*types.ResourceInUseException)) {
		tb.Fatal(err)
	}
	testenv.DropTable(tb, d.Client(), table)
	s := StartOn(tb, d, server.Options{PollInterval: 200 * time.Millisecond, MaxStreamsPerPrincipal: 1000})
	for i := range 5 {
		if err := s.NS.Init(ctx, fmt.Sprintf("db%d", i)); err != nil {
			tb.Fatal(err)
		}
	}
	for i := range streams {
		path := "/ns/v1/watch?prefix="
		if i%2 == 1 {
			path = "/v1/fluree/events?all=true"
		}
		openSynced(tb, s, path)
	}
	return proxy
}

// openSynced opens a stream and reads what it starts with: /ns/v1/watch up
// to "synced", Fluree's events their first record.
func openSynced(tb testing.TB, s *Server, path string) {
	st := s.Stream(tb, path)
	for {
		ev := st.Next(tb)
		if path != "/ns/v1/watch?prefix=" || strings.HasPrefix(ev, "event: synced") {
			return
		}
	}
}

// The backend's request rate does not grow with the number of streams:
// one upstream watch serves them all, polled or on the table's stream. (It
// may fall under load, with -race on two busy cores, when polls run late;
// the levels are measured at once, so what is checked, that more streams
// never cost more than twice the requests of one, holds however busy the
// machine.)
func TestWatchFanoutDynamoDB(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "poll", true: "stream"}[stream], func(t *testing.T) {
			levels := []int{1, 10, 100}
			rates := fanoutRates(t, stream, levels, 4*time.Second)
			t.Logf("backend requests/s with %v streams: %.1f", levels, rates)
			for _, r := range rates {
				if rates[0] <= 0 || r <= 0 || r > 2*rates[0] {
					t.Fatalf("backend requests/s with %v streams: %.1f, want more streams within 2x of one", levels, rates)
				}
			}
		})
	}
}

// BenchmarkWatchFanout reports the backend requests per second with 1, 10
// and 100 streams open, over DynamoDB Local polled every 200 ms and with
// its stream:
//
//	scripts/testservers.sh start && eval "$(scripts/testservers.sh env)"
//	go test -run '^$' -bench WatchFanout -benchtime 1x ./server/
func BenchmarkWatchFanout(b *testing.B) {
	for _, stream := range []bool{false, true} {
		b.Run(map[bool]string{false: "poll", true: "stream"}[stream], func(b *testing.B) {
			for range b.N {
				rates := fanoutRates(b, stream, []int{1, 10, 100}, 10*time.Second)
				b.ReportMetric(rates[0], "req/s-1")
				b.ReportMetric(rates[1], "req/s-10")
				b.ReportMetric(rates[2], "req/s-100")
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}
