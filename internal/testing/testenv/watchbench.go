package testenv

import (
	"cmp"
	"context"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/model"
)

// WatchFor is how long a watch benchmark writes: NS_BENCH_WATCH_FOR, 15 s
// by default.
func WatchFor(b *testing.B) time.Duration {
	s := cmp.Or(os.Getenv("NS_BENCH_WATCH_FOR"), "15s")
	d, err := time.ParseDuration(s)
	if err != nil {
		b.Fatalf("NS_BENCH_WATCH_FOR=%q: %v", s, err)
	}
	return d
}

// WatchLoad is the writer of a watch benchmark: Writer pushes 10 head
// changes per second for For, to the records ID(r), r spread over N; T
// holds each record's head watermark across runs.
type WatchLoad struct {
	Writer driver.Driver
	N      int
	ID     func(r int) model.ID
	For    time.Duration
	T      map[int]int64
	// Wait bounds the wait, once writing stops, for the events of the
	// last writes and for Settled (nil: nothing more) to hold.
	Wait    time.Duration
	Settled func() bool
	// Reported is the fraction of the writes whose events must arrive
	// within Wait (1: all).
	Reported float64
}

// WatchLatency runs the watch open returns under load l and returns p50
// and p99, in ms, of the time from the start of each write to the event
// that reports it (each write of an event that reports several).
func WatchLatency(b *testing.B, l WatchLoad, open func(context.Context) (<-chan driver.Event, error)) [2]float64 {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := open(ctx)
	Must(b, err)
	w := &watchWaiter{sent: map[string]time.Time{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.receive(b, ch)
	}()
	writes := w.write(b, l)
	for end := time.Now().Add(l.Wait); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		w.mu.Lock()
		reported := len(w.lat)
		w.mu.Unlock()
		if reported >= writes && (l.Settled == nil || l.Settled()) {
			break
		}
	}
	cancel()
	<-done
	if float64(len(w.lat)) < l.Reported*float64(writes) {
		b.Fatalf("%d of %d writes reported", len(w.lat), writes)
	}
	return [2]float64{quantileMS(w.lat, 0.50), quantileMS(w.lat, 0.99)}
}

// watchWaiter matches events to the writes they report.
type watchWaiter struct {
	mu   sync.Mutex
	sent map[string]time.Time // "id t" -> start of the write
	lat  []time.Duration
}

func (w *watchWaiter) receive(b *testing.B, ch <-chan driver.Event) {
	for ev := range ch {
		if ev.Err != nil {
			b.Errorf("watch: %v", ev.Err)
			return
		}
		now := time.Now()
		w.mu.Lock()
		for t := ev.Old + 1; t <= ev.New.V; t++ {
			if at, ok := w.sent[ev.ID.String()+" "+strconv.FormatInt(t, 10)]; ok {
				w.lat = append(w.lat, now.Sub(at))
			}
		}
		w.mu.Unlock()
	}
}

// write pushes l's writes and returns how many it made.
func (w *watchWaiter) write(b *testing.B, l WatchLoad) int {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	end := time.After(l.For)
	for i := 0; ; i++ {
		select {
		case <-end:
			return i
		case <-tick.C:
		}
		r := (i * 7919) % l.N // spread over the records
		id := l.ID(r)
		w.mu.Lock()
		l.T[r]++
		t := l.T[r]
		w.sent[id.String()+" "+strconv.FormatInt(t, 10)] = time.Now()
		w.mu.Unlock()
		if out, err := l.Writer.Update(context.Background(), id, model.Head, driver.IfAbove(), model.RefValue("c", t)); err != nil || !out.Applied {
			b.Fatalf("push %s head %d: %+v %v", id, t, out, err)
		}
	}
}
