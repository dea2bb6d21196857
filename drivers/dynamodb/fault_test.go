package dynamodb_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/dynamodb"
)

// fault is what faultProxy does to one request.
type fault int

const (
	pass          fault = iota
	throttle            // answer 400 ProvisionedThroughputExceededException, not forwarded
	error500            // answer 500 InternalServerError, not forwarded
	error500After       // forward, then answer 500 instead of DynamoDB's answer
	dropBefore          // close the connection without forwarding
	dropAfter           // forward, then close the connection without answering
	numFaults
)

var faultNames = [numFaults]string{"pass", "throttle", "500", "500 after forwarding", "drop before forwarding", "drop after forwarding"}

// faultProxy reverse-proxies to DynamoDB Local and injects faults into a
// share of the requests.
type faultProxy struct {
	url    string             // the proxy's own endpoint
	target string             // DynamoDB Local
	share  [numFaults]float64 // probability of each fault
	client *http.Client
	mu     sync.Mutex
	rnd    *rand.Rand
	counts [numFaults]atomic.Int64
	landed [][]byte // the bodies of the UpdateItem requests DynamoDB applied
}

func newFaultProxy(t *testing.T, target string, share [numFaults]float64) *faultProxy {
	p := &faultProxy{target: target, share: share, client: &http.Client{Timeout: 10 * time.Second},
		rnd: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))}
	srv := httptest.NewServer(p)
	p.url = srv.URL
	t.Cleanup(func() {
		srv.Close()
		p.client.CloseIdleConnections()
	})
	return p
}

func (p *faultProxy) summary() string {
	var b strings.Builder
	for f := pass; f < numFaults; f++ {
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(faultNames[f] + " " + strconv.FormatInt(p.counts[f].Load(), 10))
	}
	return b.String()
}

func (p *faultProxy) pick() fault {
	p.mu.Lock()
	x := p.rnd.Float64()
	p.mu.Unlock()
	for f := throttle; f < numFaults; f++ {
		if x < p.share[f] {
			return f
		}
		x -= p.share[f]
	}
	return pass
}

func (p *faultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	f := p.pick()
	p.counts[f].Add(1)

	switch f {
	case throttle:
		awsError(w, 400, "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException", "injected throttling")
		return
	case error500:
		awsError(w, 500, "com.amazonaws.dynamodb.v20120810#InternalServerError", "injected failure")
		return
	case dropBefore:
		hangUp(w)
		return
	}
	resp, err := p.forward(r, body)
	if err != nil {
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	respBody, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusOK && strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".UpdateItem") {
		p.mu.Lock()
		p.landed = append(p.landed, body)
		p.mu.Unlock()
	}
	switch f {
	case error500After:
		awsError(w, 500, "com.amazonaws.dynamodb.v20120810#InternalServerError", "injected failure after the write")
	case dropAfter:
		hangUp(w)
	default:
		for k, vs := range resp.Header {
			w.Header()[k] = vs
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(respBody)
	}
}

func (p *faultProxy) forward(r *http.Request, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(r.Context(), r.Method, p.target+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = r.Header.Clone()
	req.Host = r.Host
	return p.client.Do(req)
}

func awsError(w http.ResponseWriter, code int, typ, msg string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("X-Amzn-Requestid", "injected")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, `{"__type":"`+typ+`","message":"`+msg+`"}`)
}

// hangUp closes the client's connection without an answer.
func hangUp(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		_ = conn.Close()
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
	proxy := newFaultProxy(t, cfg.Endpoint, [numFaults]float64{
		throttle: 0.08, error500: 0.04, error500After: 0.04, dropBefore: 0.04, dropAfter: 0.05,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	direct := openNS(t, cfg)
	id := "fault" + randomHex(4) + "/db"
	must(t, direct.Init(ctx, id))

	const clients, rounds = 2, 150
	outcomes := make([][]string, clients) // per client and round: applied|conflict|unknown|error
	var wg sync.WaitGroup
	for i := range clients {
		pcfg := cfg
		pcfg.Endpoint = proxy.url
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
	landed := proxy.landedPushes(t)

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
	t.Logf("faults injected: %s", proxy.summary())
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
	if proxy.counts[dropAfter].Load() == 0 || proxy.counts[error500After].Load() == 0 {
		t.Fatalf("the proxy injected no fault after forwarding (%s); the test proves nothing", proxy.summary())
	}
}

// landedPushes returns, for each "client/round" of a status push, how
// many times DynamoDB applied it.
func (p *faultProxy) landedPushes(t *testing.T) map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := map[string]int{}
	for _, body := range p.landed {
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
		if ctx.Err() != nil || errors.Is(err, driver.ErrNotFound) {
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
