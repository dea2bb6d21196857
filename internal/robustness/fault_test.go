package robustness

import (
	"context"
	"testing"
	"time"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/dynamodb"
	"nameservice.dev/nameservice/drivers/s3etag"
	"nameservice.dev/nameservice/internal/faultproxy"
	"nameservice.dev/nameservice/jsonld"
)

// faults common to both servers: about one request in five is hit, and
// latency is added to one in ten.
var commonRates = map[faultproxy.Fault]float64{
	faultproxy.Latency:       0.10,
	faultproxy.ResetBefore:   0.03,
	faultproxy.ResetAfter:    0.04,
	faultproxy.Error500:      0.03,
	faultproxy.Error500After: 0.04,
}

func rates(extra map[faultproxy.Fault]float64) map[faultproxy.Fault]float64 {
	r := map[faultproxy.Fault]float64{}
	for f, x := range commonRates {
		r[f] = x
	}
	for f, x := range extra {
		r[f] = x
	}
	return r
}

// startProxy starts a fault proxy in front of target, turned off until the
// workload starts.
func startProxy(t *testing.T, target string, seed uint64, r map[faultproxy.Fault]float64) *faultproxy.Proxy {
	t.Helper()
	p, err := faultproxy.Start(faultproxy.Config{Target: target, Seed: seed, Rates: r, MaxLatency: 20 * time.Millisecond, Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	p.SetEnabled(false)
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// faultWorkload is workload with the proxy turned on once the clients are
// open and the IDs exist.
func faultWorkload(seed uint64, p *faultproxy.Proxy) Workload {
	w := workload(seed)
	w.Started = func() { p.SetEnabled(true) }
	return w
}

// requireFaults fails t unless the proxy injected faults after forwarding,
// the ones that leave the outcome ambiguous.
func requireFaults(t *testing.T, p *faultproxy.Proxy) {
	t.Helper()
	t.Logf("faults injected: %d (%s)", p.Injected(), p.Summary())
	if p.Count(faultproxy.ResetAfter) == 0 || p.Count(faultproxy.Error500After) == 0 {
		t.Errorf("no fault after forwarding was injected (%s): the run proves little", p.Summary())
	}
}

func TestFaultsDynamoDB(t *testing.T) {
	t.Parallel()
	cfg := dynamoConfig(t)
	p := startProxy(t, cfg.Endpoint, 11, rates(map[faultproxy.Fault]float64{faultproxy.Throttle: 0.05}))
	cfg.Endpoint = p.URL()
	open := func(ctx context.Context) (driver.Driver, error) { return dynamodb.Open(ctx, cfg) }
	runChecked(t, open, faultWorkload(6, p), true)
	requireFaults(t, p)
}

func TestFaultsS3(t *testing.T) {
	t.Parallel()
	for i, l := range []jsonld.Layout{s3etag.LayoutB, s3etag.LayoutC} {
		t.Run(l.String(), func(t *testing.T) {
			cfg := s3Config(t, l)
			p := startProxy(t, cfg.Endpoint, 12+uint64(i), rates(map[faultproxy.Fault]float64{faultproxy.SlowDown: 0.04, faultproxy.Conflict409: 0.05}))
			cfg.Endpoint = p.URL()
			open := func(ctx context.Context) (driver.Driver, error) { return s3etag.Open(ctx, cfg) }
			runChecked(t, open, faultWorkload(7, p), true)
			requireFaults(t, p)
			if p.Count(faultproxy.Conflict409) == 0 {
				t.Errorf("no 409 was injected (%s)", p.Summary())
			}
		})
	}
}
