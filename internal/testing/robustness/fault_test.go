package robustness

import (
	"context"
	"net/http"
	neturl "net/url"
	"testing"
	"time"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/docstore"
	"nameservice.dev/nameservice/drivers/dynamodb"
	"nameservice.dev/nameservice/drivers/fs"
	"nameservice.dev/nameservice/drivers/s3etag"
	"nameservice.dev/nameservice/internal/testing/faultproxy"
	"nameservice.dev/nameservice/jsonld"
)

// faults common to every server: about one request in five is hit, and
// latency is added to one in ten.
var commonRates = map[faultproxy.Fault]float64{
	faultproxy.Latency:       0.10,
	faultproxy.ResetBefore:   0.03,
	faultproxy.ResetAfter:    0.04,
	faultproxy.Error500:      0.03,
	faultproxy.Error500After: 0.04,
}

// loseRate is the share of the writes answered with success whose answer a
// campaign loses while the chaos client purges (and creates again) the
// record or writes to it: the window where a resend can land on the wrong
// record, or a landed write be misreported.
const loseRate = 0.15

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

// startProxy starts a fault proxy in front of target that loses answers
// with lose (none when nil), turned off until the workload starts.
func startProxy(t *testing.T, target string, seed uint64, r map[faultproxy.Fault]float64, lose func(*http.Request) bool) *faultproxy.Proxy {
	t.Helper()
	p, err := faultproxy.Start(faultproxy.Config{Target: target, Seed: seed, Rates: r, MaxLatency: 20 * time.Millisecond, Limit: 500, Lose: lose})
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

// Endpoints opens clients of one store through a given endpoint: the
// server's own, or a proxy's in front of it.
type Endpoints func(endpoint string) Opener

// faultRun is one run of a fault campaign: the clients reach the store
// through a fault proxy in front of target that injects r's faults and
// loses answers while a chaos client, reaching target directly, purges and
// creates the records again.
func faultRun(t *testing.T, seed uint64, target string, at Endpoints, r map[faultproxy.Fault]float64) *faultproxy.Proxy {
	t.Helper()
	chaos := &Chaos{Open: at(target), Rate: loseRate, Seed: seed}
	p := startProxy(t, target, seed, r, chaos.Lose)
	w := faultWorkload(seed, p)
	w.Chaos = chaos
	runChecked(t, at(p.URL()), w, true)
	requireFaults(t, p, chaos)
	return p
}

// requireFaults fails t unless the proxy injected faults after forwarding,
// the ones that leave the outcome ambiguous, and lost answers while the
// chaos client purged records.
func requireFaults(t *testing.T, p *faultproxy.Proxy, chaos *Chaos) {
	t.Helper()
	t.Logf("faults injected: %d (%s); lost answers: %s", p.Injected(), p.Summary(), chaos)
	if p.Count(faultproxy.ResetAfter) == 0 || p.Count(faultproxy.Error500After) == 0 {
		t.Errorf("no fault after forwarding was injected (%s): the run proves little", p.Summary())
	}
	if _, purged, _ := chaos.Windows(); purged == 0 {
		t.Errorf("no answer was lost while the record was purged (%s): the run proves little", chaos)
	}
}

func TestFaultsDynamoDB(t *testing.T) {
	t.Parallel()
	campaign(t, func(t *testing.T, seed uint64) {
		cfg := dynamoConfig(t)
		faultRun(t, seed, cfg.Endpoint, dynamoAt(cfg), rates(map[faultproxy.Fault]float64{faultproxy.Throttle: 0.05}))
	})
}

// dynamoAt opens clients of the table of cfg.
func dynamoAt(cfg dynamodb.Config) Endpoints {
	return func(endpoint string) Opener {
		c := cfg
		c.Endpoint = endpoint
		return func(ctx context.Context) (driver.Driver, error) { return dynamodb.Open(ctx, c) }
	}
}

func TestFaultsDocstoreDynamoDB(t *testing.T) {
	t.Parallel()
	campaign(t, func(t *testing.T, seed uint64) {
		endpoint, at := docstoreDynamoDB(t)
		faultRun(t, seed, endpoint, at, rates(map[faultproxy.Fault]float64{faultproxy.Throttle: 0.05}))
	})
}

func TestFaultsS3(t *testing.T) {
	t.Parallel()
	// A 409 goes only to a conditional PUT, which a run with few live
	// records sends few of: one run in a few hundred draws none. The
	// campaign as a whole (both layouts at least) must have injected one.
	runs, conflicts := 0, int64(0)
	for _, l := range []jsonld.Layout{jsonld.LayoutB, jsonld.LayoutC} {
		t.Run(l.String(), func(t *testing.T) {
			campaign(t, func(t *testing.T, seed uint64) {
				cfg := s3Config(t, l)
				p := faultRun(t, seed, cfg.Endpoint, s3At(cfg), rates(map[faultproxy.Fault]float64{faultproxy.SlowDown: 0.04, faultproxy.Conflict409: 0.05}))
				runs, conflicts = runs+1, conflicts+p.Count(faultproxy.Conflict409)
			})
		})
	}
	if runs > 1 && conflicts == 0 {
		t.Errorf("no 409 was injected in %d runs", runs)
	}
}

// s3At opens clients of the bucket of cfg.
func s3At(cfg s3etag.Config) Endpoints {
	return func(endpoint string) Opener {
		c := cfg
		c.Endpoint = endpoint
		return func(ctx context.Context) (driver.Driver, error) { return s3etag.Open(ctx, c) }
	}
}

// TestFaultsFS runs the workload on a directory with the chaos client
// purging and creating records at random moments: no answer of a file
// system call can be lost (the process that made it would have died; see
// TestFaultsRemote/FS and TestReplicatedFS for that).
func TestFaultsFS(t *testing.T) {
	t.Parallel()
	for _, l := range []jsonld.Layout{jsonld.LayoutB, jsonld.LayoutC} {
		t.Run(l.String(), func(t *testing.T) {
			campaign(t, func(t *testing.T, seed uint64) {
				open := fsOpener(t.TempDir(), l)
				w := workload(seed)
				w.Chaos = &Chaos{Open: open, Interval: 20 * time.Millisecond, Seed: seed}
				runChecked(t, open, w, false)
				if _, purged, _ := w.Chaos.Windows(); purged == 0 {
					t.Errorf("the chaos client never purged a record (%s)", w.Chaos)
				}
				t.Logf("chaos: %s", w.Chaos)
			})
		})
	}
}

// fsOpener opens clients of the directory dir.
func fsOpener(dir string, l jsonld.Layout) Opener {
	return func(ctx context.Context) (driver.Driver, error) {
		return fs.Open(ctx, fs.Config{Dir: dir, Layout: l})
	}
}

// docstoreAt opens clients of the docstore collection url.
func docstoreAt(url func(endpoint string) string) Endpoints {
	return func(endpoint string) Opener {
		return func(ctx context.Context) (driver.Driver, error) {
			u, err := neturl.Parse(url(endpoint))
			if err != nil {
				return nil, err
			}
			cfg, err := docstore.ParseURL(u)
			if err != nil {
				return nil, err
			}
			return docstore.Open(ctx, cfg)
		}
	}
}
