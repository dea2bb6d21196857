package mem

import (
	"context"
	"strings"
	"sync"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/model"
)

// subscriber is one Watch. Events are queued without bound under the store
// lock and forwarded by the subscriber's own goroutine, so a slow reader
// never blocks writers.
type subscriber struct {
	opts driver.WatchOptions
	mu   sync.Mutex
	q    []driver.Event
	wake chan struct{}
}

// ExactWatch marks the mem driver's feed as exact: every change is its own
// event.
func (d *Driver) ExactWatch() {}

// Watch implements driver.Watcher: every change is reported once, in the
// order the store applied it.
func (d *Driver) Watch(ctx context.Context, opts driver.WatchOptions) (<-chan driver.Event, error) {
	sub := &subscriber{opts: opts, wake: make(chan struct{}, 1)}
	err := d.run(ctx, func(s *Store) error {
		s.subs[sub] = true
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make(chan driver.Event)
	go d.forward(ctx, sub, out)
	return out, nil
}

func (d *Driver) forward(ctx context.Context, sub *subscriber, out chan<- driver.Event) {
	defer close(out)
	defer func() {
		d.s.mu.Lock()
		delete(d.s.subs, sub)
		d.s.mu.Unlock()
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-sub.wake:
		}
		sub.mu.Lock()
		q := sub.q
		sub.q = nil
		sub.mu.Unlock()
		for _, ev := range q {
			select {
			case out <- ev:
			case <-ctx.Done():
				return
			}
		}
	}
}

// notify queues ev, an event of a record of kind k, for every subscriber
// that reports it. The caller holds s.mu.
func (s *Store) notify(k model.Kind, ev driver.Event) {
	for sub := range s.subs {
		o := sub.opts
		if o.ID.IsZero() && !strings.HasPrefix(ev.ID.String(), o.Prefix) || !o.ID.IsZero() && ev.ID != o.ID ||
			!o.Reports(k, ev) {
			continue
		}
		sub.mu.Lock()
		sub.q = append(sub.q, ev)
		sub.mu.Unlock()
		select {
		case sub.wake <- struct{}{}:
		default:
		}
	}
}
