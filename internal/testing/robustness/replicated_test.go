package robustness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"nameservice.dev/nameservice/internal/testing/faultproxy"
	"nameservice.dev/nameservice/internal/testing/testenv"
)

// The replicated service: instances of ns serve over one store, clients
// behind a balancer, one instance killed and restarted every 1 to 3 s.
const (
	instances      = 3
	replicaClients = 8
	replicaOps     = 40               // each client's operations at least,
	replicaRun     = 20 * time.Second // and more until this has passed
)

// TestReplicatedDynamoDB and TestReplicatedFS run three ns serve processes
// over one DynamoDB table or one directory; eight http:// clients send
// each attempt to a random instance through a balancer (the driver sees one
// URL), while one instance after another is killed with SIGKILL and
// restarted on its port. With faults, a fault proxy between the clients
// and the balancer also cuts requests off, answers 500 before or after
// they ran, and loses answers while the chaos client purges and creates
// records again. The history must be linearizable: a write whose answer
// was lost lands once, on its record, and is never misreported, whichever
// instance (a restarted one included) sees its resend.
func TestReplicatedDynamoDB(t *testing.T) {
	t.Parallel()
	replicatedVariants(t, func(t *testing.T) string {
		cfg := dynamoConfig(t)
		return "dynamodb://" + cfg.Table + "?region=us-east-1&endpoint=" + neturl.QueryEscape(cfg.Endpoint)
	})
}

func TestReplicatedFS(t *testing.T) {
	t.Parallel()
	replicatedVariants(t, func(t *testing.T) string { return "file://" + t.TempDir() })
}

// replicatedVariants runs the campaign over the store newStore makes for
// each run, with kills only and with kills and faults.
func replicatedVariants(t *testing.T, newStore func(t *testing.T) string) {
	for _, faulty := range []bool{false, true} {
		name := "Kills"
		if faulty {
			name = "KillsAndFaults"
		}
		t.Run(name, func(t *testing.T) {
			campaign(t, func(t *testing.T, seed uint64) { replicated(t, seed, newStore(t), faulty) })
		})
	}
}

// replicated is one run of the replicated service over the store at url.
func replicated(t *testing.T, seed uint64, url string, faulty bool) {
	var procs []*testenv.ServeProcess
	var targets []string
	for range instances {
		// Debug: one log line per backend call, to trace a failing run.
		p := testenv.ServeCLI(t, url, "--insecure-no-auth", "--log-level", "debug")
		procs = append(procs, p)
		targets = append(targets, p.URL)
	}
	bal := &balancer{targets: targets, rnd: rand.New(rand.NewPCG(seed, 0xba1)), served: make([]atomic.Int64, instances),
		client: &http.Client{Timeout: time.Minute, Transport: &http.Transport{DisableKeepAlives: true}}}
	front := httptest.NewServer(bal)
	t.Cleanup(front.Close)

	w := workload(seed)
	w.Clients, w.Ops, w.Duration = replicaClients, replicaOps, replicaRun
	k := &killer{procs: procs, rnd: rand.New(rand.NewPCG(seed, 0x4111))}
	for i, p := range procs {
		k.all = append(k.all, started{i, p})
	}
	ctx, stop := context.WithCancel(context.Background())
	var killing sync.WaitGroup
	entry := front.URL
	var proxy *faultproxy.Proxy
	if faulty {
		w.Chaos = &Chaos{Open: remoteAt(front.URL), Rate: loseRate, Seed: seed}
		proxy = startProxy(t, front.URL, seed, rates(nil), w.Chaos.Lose)
		entry = proxy.URL()
		defer requireFaults(t, proxy, w.Chaos)
	}
	w.Started = func() {
		if proxy != nil {
			proxy.SetEnabled(true)
		}
		killing.Go(func() { k.run(ctx, t) })
	}
	runChecked(t, remoteAt(entry), w, true)
	stop()
	killing.Wait()
	t.Logf("%d kills; requests per instance %v; %d refused by a dead instance and sent to another", k.kills, bal.counts(), bal.redirected.Load())
	if k.kills == 0 {
		t.Error("no instance was killed: the run proves little")
	}
	for i, n := range bal.counts() {
		if n == 0 {
			t.Errorf("instance %d answered no request", i)
		}
	}
	k.stop(t)
}

// killer kills a random instance with SIGKILL every 1 to 3 s and restarts
// it on its port.
type killer struct {
	procs []*testenv.ServeProcess
	all   []started // every process started, in order
	rnd   *rand.Rand
	kills int
}

// started is a process that ran as an instance.
type started struct {
	instance int
	p        *testenv.ServeProcess
}

func (k *killer) run(ctx context.Context, t *testing.T) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second + time.Duration(k.rnd.Int64N(int64(2*time.Second)))):
		}
		i := k.rnd.IntN(len(k.procs))
		if err := k.procs[i].Kill(); err != nil {
			t.Errorf("kill instance %d: %v", i, err)
			return
		}
		p, err := k.procs[i].Restart(t)
		if err != nil {
			t.Errorf("restart instance %d: %v", i, err)
			return
		}
		k.procs[i] = p
		k.all = append(k.all, started{i, p})
		k.kills++
	}
}

// stop kills the instances and fails t when one of them, or of those
// killed during the run, had panicked: a server that crashed by itself is
// a bug, not a fault. When t has failed, it writes the logs of every
// process, in the order they started, to one file under
// $NS_TEST_ARTIFACTS, to trace the failing history's operations.
func (k *killer) stop(t *testing.T) {
	for _, p := range k.procs {
		_ = p.Kill()
	}
	for _, s := range k.all {
		if log := s.p.Stderr.String(); strings.Contains(log, "panic:") {
			t.Errorf("instance %d panicked:\n%s", s.instance, log)
		}
	}
	if !t.Failed() {
		return
	}
	f, err := writeArtifact(t.Name()+"-instances", ".log", func(w io.Writer) error {
		for n, s := range k.all {
			if _, err := fmt.Fprintf(w, "== instance %d, process %d (%s)\n%s", s.instance, n, s.p.URL, s.p.Stderr); err != nil {
				return err
			}
		}
		return nil
	})
	t.Logf("the instances' logs: %s (%v)", f, err)
}

// balancer is the clients' single URL: it sends each request to a random
// instance, and to another one when the instance refuses the connection
// (it is down: the request never left), as a load balancer does. It
// never sends a request again once it may have reached an instance: a
// broken exchange is answered 502, and the client decides.
type balancer struct {
	targets    []string
	client     *http.Client // no keep-alives: a connection never outlives its instance
	mu         sync.Mutex
	rnd        *rand.Rand
	served     []atomic.Int64
	redirected atomic.Int64
}

func (b *balancer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	b.mu.Lock()
	order := b.rnd.Perm(len(b.targets))
	b.mu.Unlock()
	for _, i := range order {
		resp, err := b.forward(r, body, b.targets[i])
		if refused(err) {
			b.redirected.Add(1)
			continue
		}
		if err != nil {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		b.served[i].Add(1)
		relay(w, resp)
		return
	}
	w.WriteHeader(http.StatusBadGateway)
}

func (b *balancer) forward(r *http.Request, body []byte, target string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(r.Context(), r.Method, target+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.GetBody = nil // never resent by net/http
	req.Header = r.Header.Clone()
	return b.client.Do(req)
}

// relay copies resp to w and closes it.
func relay(w http.ResponseWriter, resp *http.Response) {
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// refused reports whether err is a connection that could not be made.
func refused(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func (b *balancer) counts() []int64 {
	var n []int64
	for i := range b.served {
		n = append(n, b.served[i].Load())
	}
	return n
}
