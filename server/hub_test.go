package server_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/mem"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/model"
	"nameservice.dev/nameservice/server"
)

// countingPoll hides a store's change feed, so the server polls it, and
// counts the listings and reads the server makes.
type countingPoll struct {
	driver.Driver
	calls atomic.Int64
}

func (c *countingPoll) List(ctx context.Context, opts driver.ListOptions) (*driver.Page, error) {
	c.calls.Add(1)
	return c.Driver.List(ctx, opts)
}

func (c *countingPoll) Get(ctx context.Context, id model.ID) (*model.Record, error) {
	c.calls.Add(1)
	return c.Driver.Get(ctx, id)
}

// The backend is polled once per interval whatever the number of streams:
// one upstream watch per key serves every stream on it (and the metrics
// say so).
func TestWatchOneUpstreamForManyStreams(t *testing.T) {
	store := mem.NewStore()
	backend := &countingPoll{Driver: store.Open()}
	const interval = 20 * time.Millisecond
	s := StartOn(t, backend, server.Options{PollInterval: interval})
	for i := range 5 {
		Must(t, s.NS.Init(context.Background(), fmt.Sprintf("db%d", i)))
	}
	// window counts the backend calls over a second or more, and returns
	// the most polls one upstream can make in that time (a poll of five
	// records is one List): a loaded machine polls less often, never more.
	window := func() (calls, maxPolls int64) {
		before, began := backend.calls.Load(), time.Now()
		time.Sleep(time.Second)
		for backend.calls.Load() == before {
			time.Sleep(interval)
		}
		return backend.calls.Load() - before, int64(time.Since(began)/interval) + 2
	}
	streams := []*SSE{synced(t, s.Stream(t, "/ns/v1/watch?prefix=db"))}
	if one, most := window(); one > most {
		t.Fatalf("backend calls with one stream: %d, want at most %d", one, most)
	}
	for range 19 {
		streams = append(streams, synced(t, s.Stream(t, "/ns/v1/watch?prefix=db")))
	}
	for range 10 {
		ev := s.Stream(t, "/v1/fluree/events?all=true")
		ev.Next(t)
		streams = append(streams, ev)
	}
	_, b := s.Call(t, "GET", "/metrics", "")
	if !strings.Contains(b, "nameservice_watch_upstreams 2\n") {
		t.Fatalf("upstreams: %s, want 2 (prefix db, and every record)", grepLines(b, "upstreams"))
	}
	if many, most := window(); many > 2*most {
		t.Fatalf("backend calls with 30 streams on 2 upstreams: %d, want at most %d", many, 2*most)
	}
	// Every stream sees a change; the upstreams stop with their last stream.
	_, err := s.NS.PublishCommit(context.Background(), "db3", 1, testenv.CID("x"))
	Must(t, err)
	for _, st := range streams[:20] {
		if got := st.Next(t); !strings.Contains(got, `"id":"db3:main"`) {
			t.Fatalf("change event %q", got)
		}
	}
	for _, st := range streams {
		st.Resp.Body.Close()
	}
	deadline := time.Now().Add(10 * time.Second)
	for ; time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, b = s.Call(t, "GET", "/metrics", ""); strings.Contains(b, "nameservice_watch_upstreams 0\n") {
			return
		}
	}
	t.Fatalf("upstreams after every stream closed: %s", grepLines(b, "upstreams"))
}

// synced reads a watch stream up to its "synced" event.
func synced(t *testing.T, st *SSE) *SSE {
	t.Helper()
	for !strings.HasPrefix(st.Next(t), "event: synced") {
	}
	return st
}

// A client that stops reading its stream does not delay the others: they
// get every change as it happens, while the stalled stream, once its
// buffers are full, is dropped and its connection closed (its memory with
// it).
func TestWatchStalledSubscriberDropped(t *testing.T) {
	ns := nameservice.New(mem.NewStore().Open())
	srv := server.New(ns, server.Options{NoAuth: true})
	hs := httptest.NewUnstartedServer(srv)
	closed := make(chan string, 64)
	hs.Config.ConnState = func(c net.Conn, st http.ConnState) {
		if st == http.StateClosed {
			closed <- c.RemoteAddr().String()
		}
	}
	hs.Start()
	t.Cleanup(func() { _ = srv.Close(); hs.Close() })
	s := &Server{Server: hs, NS: ns, Srv: srv}
	ctx := context.Background()
	Must(t, s.NS.Init(ctx, "db"))

	u, _ := url.Parse(s.URL)
	conn, err := net.Dial("tcp", u.Host)
	Must(t, err)
	defer conn.Close()
	_ = conn.(*net.TCPConn).SetReadBuffer(4096)
	_, err = io.WriteString(conn, "GET /ns/v1/watch?prefix= HTTP/1.1\r\nHost: x\r\n\r\n")
	Must(t, err)

	healthy := make([]*SSE, 3)
	for i := range healthy {
		healthy[i] = synced(t, s.Stream(t, "/ns/v1/watch?prefix="))
	}
	const pushes = 600
	pad := strings.Repeat("p", 40_000)
	var wg sync.WaitGroup
	late := make(chan string, len(healthy))
	for i, st := range healthy {
		wg.Go(func() {
			for v := int64(1); v <= pushes; v++ {
				got := st.Next(t)
				if !strings.Contains(got, fmt.Sprintf(`"new":{"v":%d,`, v)) {
					late <- fmt.Sprintf("stream %d: event %.80q, want config v%d", i, got, v)
					return
				}
			}
		})
	}
	cur := nameservice.Value{}
	for v := int64(1); v <= pushes; v++ {
		next := nameservice.Value{V: v, Payload: nameservice.Object{"pad": pad}}
		out, err := s.NS.PushConfig(ctx, "db", cur, next)
		if err != nil || !out.Applied {
			t.Fatalf("push %d: %v %v", v, out, err)
		}
		cur = next
	}
	wg.Wait()
	close(late)
	for msg := range late {
		t.Fatal(msg)
	}
	// The stalled stream was dropped: the server closed its connection
	// (what the kernel still buffers for it is no longer the server's).
	for timeout := time.After(10 * time.Second); ; {
		select {
		case addr := <-closed:
			if addr != conn.LocalAddr().String() {
				continue
			}
		case <-timeout:
			t.Fatal("the server did not close the stalled stream's connection")
		}
		break
	}
	_, b := s.Call(t, "GET", "/metrics", "")
	if !strings.Contains(b, "nameservice_sse_dropped_total 1\n") {
		t.Fatalf("dropped streams: %s", grepLines(b, "dropped"))
	}
}
