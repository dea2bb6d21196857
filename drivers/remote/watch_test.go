package remote_test

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers"
	"nameservice.dev/nameservice/drivers/dynamodb"
	"nameservice.dev/nameservice/drivers/mem"
	"nameservice.dev/nameservice/drivers/remote"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/model"
	"nameservice.dev/nameservice/server"
)

// cutter is a TCP proxy whose connections can all be cut at once, while it
// keeps accepting new ones.
type cutter struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
	gate   chan struct{} // new connections wait until it is closed (see hold)
	held   int           // connections waiting at the gate
}

func newCutter(t *testing.T, target string) *cutter {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &cutter{ln: ln, target: target, gate: make(chan struct{})}
	close(c.gate)
	t.Cleanup(func() { ln.Close(); c.release(); c.cut() })
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			c.mu.Lock()
			gate := c.gate
			c.held++
			c.mu.Unlock()
			go func() {
				<-gate
				c.mu.Lock()
				c.held--
				c.mu.Unlock()
				out, err := net.Dial("tcp", target)
				if err != nil {
					in.Close()
					return
				}
				c.mu.Lock()
				c.conns = append(c.conns, in, out)
				c.mu.Unlock()
				go func() { _, _ = io.Copy(out, in); out.Close() }()
				go func() { _, _ = io.Copy(in, out); in.Close() }()
			}()
		}
	}()
	return c
}

// hold makes new connections wait, unconnected, until release.
func (c *cutter) hold() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gate = make(chan struct{})
}

func (c *cutter) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.gate:
	default:
		close(c.gate)
	}
}

// waiting returns the connections held at the gate.
func (c *cutter) waiting() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.held
}

func (c *cutter) cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, conn := range c.conns {
		conn.Close()
	}
	c.conns = nil
}

// A watch whose stream breaks reconnects and reports, from the new
// snapshot, every change it missed: merged per concern, purges included.
func TestWatchResumesBySnapshot(t *testing.T) {
	store := mem.NewStore()
	hs := serve(t, store.Open(), server.Options{})
	proxy := newCutter(t, hs.Listener.Addr().String())
	direct := nameservice.New(store.Open())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, id := range []string{"w/a", "w/gone"} {
		if err := direct.Init(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	d, err := remote.Open(context.Background(), remote.Config{BaseURL: "http://" + proxy.ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := d.Watch(ctx, driver.WatchOptions{Prefix: "w/"})
	if err != nil {
		t.Fatal(err)
	}
	mustApply := func(out nameservice.Outcome, err error) {
		t.Helper()
		if err != nil || !out.Applied {
			t.Fatalf("push: %v %v", out, err)
		}
	}
	mustApply(direct.PublishCommit(ctx, "w/a", 1, "c1"))
	if ev := <-ch; ev.ID.String() != "w/a:main" || ev.Concern != model.Head || ev.New.V != 1 {
		t.Fatalf("live event %+v", ev)
	}
	proxy.cut()
	// While the stream is down: two more commits, a purge, a new record.
	mustApply(direct.PublishCommit(ctx, "w/a", 2, "c2"))
	mustApply(direct.PublishCommit(ctx, "w/a", 3, "c3"))
	if err := direct.Purge(ctx, "w/gone"); err != nil {
		t.Fatal(err)
	}
	if err := direct.Init(ctx, "w/new"); err != nil {
		t.Fatal(err)
	}
	seen := map[string]driver.Event{}
	deadline := time.After(30 * time.Second)
	for len(seen) < 3 {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatalf("feed closed; saw %v", seen)
			}
			if ev.Err != nil {
				t.Fatalf("feed failed: %v", ev.Err)
			}
			switch {
			case ev.Deleted:
				seen["purge "+ev.ID.String()] = ev
			case ev.ID.String() == "w/a:main" && ev.Concern == model.Head:
				seen["head"] = ev
			case ev.ID.String() == "w/new:main" && ev.Concern == model.Status:
				seen["new"] = ev
			}
		case <-deadline:
			t.Fatalf("after the cut, saw only %v", seen)
		}
	}
	if h := seen["head"]; h.Old != 1 || !h.New.Equal(nameservice.RefValue("c3", 3)) {
		t.Fatalf("merged head event %+v, want 1 -> 3 c3", h)
	}
	if _, ok := seen["purge w/gone:main"]; !ok {
		t.Fatalf("no purge event: %v", seen)
	}
	// And the stream is live again.
	mustApply(direct.PublishCommit(ctx, "w/a", 4, "c4"))
	for {
		select {
		case ev := <-ch:
			if ev.ID.String() == "w/a:main" && ev.Concern == model.Head {
				if ev.Old != 3 || ev.New.V != 4 {
					t.Fatalf("event after resuming %+v, want 3 -> 4", ev)
				}
				return
			}
		case <-deadline:
			t.Fatal("no live event after resuming")
		}
	}
}

// https:// with a CA file, through the registry.
func TestHTTPSWithCAFile(t *testing.T) {
	srv := server.New(nameservice.New(mem.NewStore().Open()), server.Options{NoAuth: true})
	hs := httptest.NewTLSServer(srv)
	t.Cleanup(hs.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	cert := hs.Certificate()
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// Without the CA the certificate is refused.
	d, err := drivers.Open(ctx, hs.URL)
	if err != nil {
		t.Fatal(err)
	}
	if err := nameservice.New(d).Init(ctx, "tls"); err == nil {
		t.Fatal("an untrusted certificate was accepted")
	}
	d, err = drivers.Open(ctx, hs.URL+"?ca_file="+ca)
	if err != nil {
		t.Fatal(err)
	}
	ns := nameservice.New(d)
	if err := ns.Init(ctx, "tls"); err != nil {
		t.Fatal(err)
	}
	if _, err := ns.Lookup(ctx, "tls"); err != nil {
		t.Fatal(err)
	}
}

// URLs: unknown parameters and a missing token file are refused, and no
// error repeats a secret.
func TestOpenURL(t *testing.T) {
	ctx := context.Background()
	if _, err := drivers.Open(ctx, "http://127.0.0.1:1?token=abc"); err == nil || strings.Contains(err.Error(), "abc") {
		t.Fatalf("token in the URL: %v", err)
	}
	if _, err := drivers.Open(ctx, "http://127.0.0.1:1?token_file=/nonexistent"); err == nil {
		t.Fatal("a missing token file was accepted")
	}
	if _, err := drivers.Open(ctx, "https://127.0.0.1:1?timeout=-1s"); err == nil {
		t.Fatal("a negative timeout was accepted")
	}
}

// A head moved back (reset-head) is a change like any other: the watch
// reports it, and the commits after it below the old head, as a watch of
// the backend itself does, over a backend with a change feed (memory,
// DynamoDB's stream) and over one the server polls.
func TestWatchReportsAHeadMovedBack(t *testing.T) {
	for name, open := range map[string]func(t *testing.T) (driver.Driver, driver.Driver){
		"mem": func(*testing.T) (driver.Driver, driver.Driver) { s := mem.NewStore(); return s.Open(), s.Open() },
		"mem polled": func(*testing.T) (driver.Driver, driver.Driver) {
			s := mem.NewStore()
			d := s.Open()
			return noWatch{d, d}, s.Open()
		},
		"dynamodb": func(t *testing.T) (driver.Driver, driver.Driver) {
			cfg := dynamoConfig(t)
			a, err := dynamodb.Open(context.Background(), cfg)
			must(t, err)
			b, err := dynamodb.Open(context.Background(), cfg)
			must(t, err)
			return a, b
		},
	} {
		t.Run(name, func(t *testing.T) {
			served, backend := open(t)
			hs := serve(t, served, server.Options{})
			direct := nameservice.New(backend)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			id := "back/" + strings.ReplaceAll(name, " ", "-") + "-" + testenv.RandomHex(4)
			must(t, direct.Init(ctx, id))
			for i := int64(1); i <= 5; i++ {
				if _, err := direct.PublishCommit(ctx, id, i, fmt.Sprintf("c%d", i)); err != nil {
					t.Fatal(err)
				}
			}
			d, err := remote.Open(ctx, remote.Config{BaseURL: hs.URL})
			must(t, err)
			remoteCh, err := d.Watch(ctx, driver.WatchOptions{Prefix: id, Concerns: []model.Concern{model.Head}})
			must(t, err)
			directCh, err := direct.Watch(ctx, nameservice.WatchOptions{Prefix: id, Concerns: []model.Concern{model.Head},
				Interval: 20 * time.Millisecond})
			must(t, err)
			if _, err := direct.ResetHead(ctx, id, nameservice.Ref{Address: "c3", T: 3}, nameservice.ResetOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := direct.PublishCommit(ctx, id, 4, "c4-again"); err != nil {
				t.Fatal(err)
			}
			for _, w := range []struct {
				watch string
				ch    <-chan driver.Event
			}{{"direct", directCh}, {"remote", remoteCh}} {
				watch, ch := w.watch, w.ch
				// A polled server may merge the two changes into one.
				for done := false; !done; {
					select {
					case ev := <-ch:
						if ev.Err != nil || ev.Concern != model.Head ||
							!ev.New.Equal(model.RefValue("c3", 3)) && !ev.New.Equal(model.RefValue("c4-again", 4)) {
							t.Fatalf("%s: event %+v (err %v), want head c3 at 3, then c4-again at 4", watch, ev, ev.Err)
						}
						done = ev.New.V == 4
					case <-time.After(time.Minute):
						t.Fatalf("%s: no event for the head moved back: the watch dropped it", watch)
					}
				}
			}
		})
	}
}

// The stream limit (429, with Retry-After) is no refusal: a first connect
// it refuses is an error wrapping ErrThrottled, and a watch whose
// reconnect it refuses tries again, with backoff, and goes on once a slot
// is free.
func TestWatchRetriesTheStreamLimit(t *testing.T) {
	store := mem.NewStore()
	hs := serve(t, store.Open(), server.Options{MaxStreamsPerPrincipal: 1})
	proxy := newCutter(t, hs.Listener.Addr().String())
	direct := nameservice.New(store.Open())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	must(t, direct.Init(ctx, "lim/a"))
	// other holds the one stream slot until closed.
	other := func() (closeIt func()) {
		for {
			octx, ocancel := context.WithCancel(ctx)
			req, err := http.NewRequestWithContext(octx, http.MethodGet, hs.URL+"/ns/v1/watch?prefix=lim/", nil)
			must(t, err)
			resp, err := http.DefaultClient.Do(req)
			must(t, err)
			if resp.StatusCode == http.StatusOK {
				return func() { ocancel(); resp.Body.Close() }
			}
			resp.Body.Close()
			ocancel()
			if ctx.Err() != nil {
				t.Fatal("no stream slot came free")
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	d, err := remote.Open(ctx, remote.Config{BaseURL: "http://" + proxy.ln.Addr().String()})
	must(t, err)
	closeOther := other()
	if _, err := d.Watch(ctx, driver.WatchOptions{Prefix: "lim/"}); !errors.Is(err, model.ErrThrottled) {
		t.Fatalf("watch beyond the limit: %v, want an error wrapping ErrThrottled", err)
	}
	closeOther()
	var ch <-chan driver.Event
	for ch == nil {
		if ch, err = d.Watch(ctx, driver.WatchOptions{Prefix: "lim/"}); err != nil && !errors.Is(err, model.ErrThrottled) {
			t.Fatal(err)
		}
	}
	// The stream breaks; its reconnect waits at the proxy while another
	// stream takes the slot, then meets the limit.
	proxy.hold()
	proxy.cut()
	closeOther = other()
	for proxy.waiting() == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	proxy.release()
	time.Sleep(200 * time.Millisecond)
	closeOther()
	if _, err := direct.PublishCommit(ctx, "lim/a", 1, "c1"); err != nil {
		t.Fatal(err)
	}
	select {
	case ev, ok := <-ch:
		if !ok || ev.Err != nil || ev.Concern != model.Head || ev.New.V != 1 {
			t.Fatalf("after the limit: %+v (open %v), want the head at 1", ev, ok)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no event after the slot came free")
	}
}
