package server_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/mem"
	"nameservice.dev/nameservice/model"
	"nameservice.dev/nameservice/server"
)

// slowUpdates delays every Update, to hold a push in flight.
type slowUpdates struct {
	driver.Driver
	started chan struct{}
}

func (s slowUpdates) Update(ctx context.Context, id model.ID, c model.Concern, cond driver.Condition, next model.Value) (driver.Outcome, error) {
	close(s.started)
	time.Sleep(500 * time.Millisecond)
	return s.Driver.Update(ctx, id, c, cond, next)
}

// Shutdown lets a push in flight finish and answer, even when its client
// has gone, while it ends event streams at once.
func TestShutdownFinishesInFlightPush(t *testing.T) {
	backend := mem.NewStore().Open()
	ns := nameservice.New(slowUpdates{Driver: backend, started: make(chan struct{})})
	Must(t, ns.Init(context.Background(), "db"))
	srv := server.New(ns, server.Options{NoAuth: true})
	hs := srv.HTTPServer(server.Limits{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = hs.Serve(ln) }()
	base := "http://" + ln.Addr().String()

	watch, err := http.Get(base + "/ns/v1/watch")
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Body.Close()

	type result struct {
		status int
		err    error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := http.Post(base+"/ns/v1/push/head/db:main", "application/json",
			strings.NewReader(`{"condition":"above","new":{"v":1,"payload":{"address":"a","t":1}}}`))
		if err != nil {
			done <- result{err: err}
			return
		}
		resp.Body.Close()
		done <- result{status: resp.StatusCode}
	}()
	var slow slowUpdates
	if !ns.As(&slow) {
		t.Fatal("the server's driver is not the slow one")
	}
	<-slow.started
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := hs.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v (the event stream or the push kept it waiting)", err)
	}
	r := <-done
	if r.err != nil || r.status != 200 {
		t.Fatalf("push in flight during shutdown: %d %v, want 200", r.status, r.err)
	}
	head, err := nameservice.New(backend).Head(context.Background(), "db")
	if err != nil || head.V != 1 {
		t.Fatalf("head after shutdown = %v, %v", head, err)
	}
}
