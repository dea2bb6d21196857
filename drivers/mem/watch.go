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

// matches reports whether s reports ev, an event of a record of kind k.
func (s *subscriber) matches(k model.Kind, ev driver.Event) bool {
	if !s.opts.ID.IsZero() {
		return ev.ID == s.opts.ID && s.opts.Reports(k, ev)
	}
	return strings.HasPrefix(ev.ID.String(), s.opts.Prefix) && s.opts.Reports(k, ev)
}

func (s *subscriber) push(ev driver.Event) {
	s.mu.Lock()
	s.q = append(s.q, ev)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *subscriber) take() []driver.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.q
	s.q = nil
	return q
}

// ExactWatch marks the mem driver's feed as exact: every change is its own
// event.
func (d *Driver) ExactWatch() {}

// Watch implements driver.Watcher: every change is reported once, in the
// order the store applied it.
func (d *Driver) Watch(ctx context.Context, opts driver.WatchOptions) (<-chan driver.Event, error) {
	unlock, err := d.begin(ctx)
	if err != nil {
		return nil, err
	}
	sub := &subscriber{opts: opts, wake: make(chan struct{}, 1)}
	d.s.subs[sub] = true
	unlock()
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
		for _, ev := range sub.take() {
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
		if sub.matches(k, ev) {
			sub.push(ev)
		}
	}
}

// notifyCreated reports every concern of a new record.
func (s *Store) notifyCreated(r *model.Record) {
	for _, c := range model.Concerns {
		if v := r.Value(c); v != nil {
			s.notify(r.Kind, driver.Event{ID: r.ID, Concern: c, New: v.Clone()})
		}
	}
}
