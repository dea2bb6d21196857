package dynamodb_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/drivers/dynamodb"
	"nameservice.dev/nameservice/internal/testing/faultproxy"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/model"
)

// landedLog records the bodies of the UpdateItem requests DynamoDB applied,
// as the fault proxy reports them, whatever the client was then told.
type landedLog struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (l *landedLog) record(r *http.Request, body []byte, status int) {
	if status == http.StatusOK && strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".UpdateItem") {
		l.mu.Lock()
		l.bodies = append(l.bodies, body)
		l.mu.Unlock()
	}
}

// TestFaultsRaceStaysExact has two independent clients, both talking to
// DynamoDB Local through a proxy that injects throttling, 500s (before and
// after forwarding) and dropped connections (before and after forwarding)
// into about a quarter of all requests, compare-and-set-increment one
// ledger's status_v. Each push carries its client and round in the
// payload, and the proxy records every UpdateItem DynamoDB applied, so the
// test checks each outcome against what really happened: a push reported
// applied landed exactly once, a push reported as a conflict did not land,
// and the final status_v is 1 + the pushes that landed. A push whose answer
// was lost and whose item was then written three more times before the
// driver could look is reported as an error with an unknown outcome (never
// as a conflict); the test counts those and requires them to be rare.
func TestFaultsRaceStaysExact(t *testing.T) {
	cfg := testConfig(t)
	var landedBodies landedLog
	seed := rand.Uint64()
	t.Logf("fault seed %d", seed)
	proxy, err := faultproxy.Start(faultproxy.Config{Target: cfg.Endpoint, Seed: seed, Forwarded: landedBodies.record,
		Rates: map[faultproxy.Fault]float64{
			faultproxy.Throttle: 0.08, faultproxy.Error500: 0.04, faultproxy.Error500After: 0.04,
			faultproxy.ResetBefore: 0.04, faultproxy.ResetAfter: 0.05,
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	direct := openNS(t, cfg)
	id := "fault" + testenv.RandomHex(4) + "/db"
	must(t, direct.Init(ctx, id))

	const clients, rounds = 2, 150
	outcomes := make([][]string, clients) // per client and round: applied|conflict|unknown|error
	var wg sync.WaitGroup
	for i := range clients {
		pcfg := cfg
		pcfg.Endpoint = proxy.URL()
		ns := openNS(t, pcfg)
		outcomes[i] = make([]string, rounds)
		wg.Add(1)
		go func() {
			defer wg.Done()
			cur := nameservice.StatusValue(1, "ready", nil)
			for n := range rounds {
				next := nameservice.StatusValue(cur.V+1, "ready", nameservice.Object{"by": i, "n": n})
				out, err := ns.PushStatus(ctx, id, cur, next)
				switch {
				case err == nil && out.Applied:
					outcomes[i][n] = "applied"
					cur = out.Current
				case err == nil:
					outcomes[i][n] = "conflict"
					cur = out.Current
				default:
					outcomes[i][n] = "error"
					if strings.Contains(err.Error(), "outcome unknown") {
						outcomes[i][n] = "unknown"
					}
					t.Logf("client %d, push %d: %v", i, n, err)
					cur = readStatus(ctx, t, ns, id)
				}
			}
		}()
	}
	wg.Wait()
	final := readStatus(ctx, t, direct, id)
	landed := landedBodies.pushes(t)

	tally := map[string]int{}
	for i, rs := range outcomes {
		for v, o := range rs {
			key := fmt.Sprintf("%d/%d", i, v)
			did := landed[key] > 0
			tally[o]++
			if did {
				tally[o+" (landed)"]++
			}
			switch {
			case landed[key] > 1:
				t.Errorf("client %d's push %d was applied %d times", i, v, landed[key])
			case o == "applied" && !did:
				t.Errorf("client %d's push %d was reported applied but never landed", i, v)
			case o == "conflict" && did:
				t.Errorf("client %d's push %d landed but was reported as a conflict", i, v)
			case o == "error" && did:
				t.Errorf("client %d's push %d landed but failed with an error that does not say the outcome is unknown", i, v)
			}
		}
	}
	t.Logf("faults injected: %s", proxy.Summary())
	t.Logf("outcomes: %v; final status_v %d", tally, final.V)
	if want := int64(1 + len(landed)); final.V != want {
		t.Errorf("final status_v %d, want 1 + %d landed pushes = %d", final.V, len(landed), want)
	}
	if want := int64(1 + tally["applied"] + tally["unknown (landed)"]); final.V != want {
		t.Errorf("final status_v %d, want 1 + %d applied + %d landed with unknown outcome = %d", final.V, tally["applied"], tally["unknown (landed)"], want)
	}
	if n := tally["unknown"]; n > clients*rounds/20 {
		t.Errorf("%d of %d pushes ended with an unknown outcome, want at most 5%%", n, clients*rounds)
	}
	if proxy.Count(faultproxy.ResetAfter) == 0 || proxy.Count(faultproxy.Error500After) == 0 {
		t.Fatalf("the proxy injected no fault after forwarding (%s); the test proves nothing", proxy.Summary())
	}
}

// landedPushes returns, for each "client/round" of a status push, how
// many times DynamoDB applied it.
func (l *landedLog) pushes(t *testing.T) map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := map[string]int{}
	for _, body := range l.bodies {
		var req struct {
			UpdateExpression          string
			ExpressionAttributeNames  map[string]string
			ExpressionAttributeValues map[string]struct {
				M map[string]struct{ N string }
			}
		}
		if err := json.Unmarshal(body, &req); err != nil {
			t.Fatalf("proxy: %v", err)
		}
		for alias, name := range req.ExpressionAttributeNames {
			if name != "status_meta" {
				continue
			}
			_, rest, _ := strings.Cut(req.UpdateExpression, alias+" = ")
			val, _, _ := strings.Cut(rest, ",")
			m := req.ExpressionAttributeValues[strings.TrimSpace(val)].M
			n[m["by"].N+"/"+m["n"].N]++
		}
	}
	return n
}

// readStatus reads the status, retrying errors (the proxy may fail a read
// more often than the SDK retries).
func readStatus(ctx context.Context, t *testing.T, ns *nameservice.NameService, id string) nameservice.Value {
	for {
		v, err := ns.StatusOf(ctx, id)
		if err == nil {
			return v
		}
		if ctx.Err() != nil || errors.Is(err, model.ErrNotFound) {
			t.Fatalf("read status: %v", err)
		}
	}
}

func openNS(t *testing.T, cfg dynamodb.Config) *nameservice.NameService {
	t.Helper()
	d, err := dynamodb.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return nameservice.New(d)
}
