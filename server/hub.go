package server

import (
	"context"
	"sync"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/guard"
	"nameservice.dev/nameservice/internal/nswire"
	"nameservice.dev/nameservice/model"
	"nameservice.dev/nameservice/server/internal/web"
)

// subscriberBuffer bounds the events waiting for one stream; events are
// shared, so their memory is bounded whatever the number of streams.
const subscriberBuffer = 256

// hub runs one upstream watch per key the open streams need and fans its
// events out to every stream on that key, which filters them to its
// caller's scope and query: the backend's work does not grow with the
// streams. A stream that does not keep up is dropped, never waited for;
// its client reconnects and resumes by snapshot.
type hub struct {
	s   *Server
	mu  sync.Mutex
	ups map[watchKey]*upstream
}

// watchKey is what an upstream watches: one ID, or the IDs under prefix;
// only concerns (comma-separated, "" for all) and kind ("" for both), which
// the backend filters where it can.
type watchKey struct {
	id       string
	prefix   string
	concerns string
	kind     model.Kind
}

// options returns the portable watch options of k, the ID aside.
func (k watchKey) options() driver.WatchOptions {
	cs, _ := model.ParseConcerns(k.concerns) // made by FormatConcerns
	return driver.WatchOptions{Prefix: k.prefix, Concerns: cs, Kind: k.kind}
}

type upstream struct {
	key    watchKey
	cancel context.CancelFunc
	ready  chan struct{} // closed once the watch started, or failed to
	err    error         // why it failed to start; read after ready
	subs   map[*subscriber]struct{}
}

// subscriber is one stream's share of an upstream.
type subscriber struct {
	up     *upstream
	events chan *web.Event // closed when the upstream ends or the stream is dropped
	// onDrop, called under hub.mu when the stream is dropped, unblocks its
	// handler, which may be stuck writing to a client that does not read.
	onDrop func()
}

// subscribe returns a subscription to the upstream of key, started when
// none runs, once it watches the backend: every change after the return is
// sent. onDrop is called when the stream is dropped for being slow.
func (h *hub) subscribe(ctx context.Context, key watchKey, onDrop func()) (*subscriber, error) {
	h.mu.Lock()
	up := h.ups[key]
	if up == nil {
		up = h.start(key)
	}
	sub := &subscriber{up: up, events: make(chan *web.Event, subscriberBuffer), onDrop: onDrop}
	up.subs[sub] = struct{}{}
	h.mu.Unlock()
	select {
	case <-up.ready:
	case <-ctx.Done():
		h.unsubscribe(sub)
		return nil, ctx.Err()
	}
	if up.err != nil {
		h.unsubscribe(sub)
		return nil, up.err
	}
	return sub, nil
}

// unsubscribe ends sub; the upstream stops with its last subscriber.
func (h *hub) unsubscribe(sub *subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	up := sub.up
	if _, ok := up.subs[sub]; ok {
		delete(up.subs, sub)
		close(sub.events)
	}
	if len(up.subs) == 0 && h.ups[up.key] == up {
		delete(h.ups, up.key)
		up.cancel()
		h.s.metrics.upstreams.Dec()
	}
}

// start runs the upstream of key; h.mu is held.
func (h *hub) start(key watchKey) *upstream {
	ctx, cancel := context.WithCancel(h.s.ctx)
	up := &upstream{key: key, cancel: cancel, ready: make(chan struct{}), subs: map[*subscriber]struct{}{}}
	h.ups[key] = up
	h.s.metrics.upstreams.Inc()
	go h.run(ctx, up)
	return up
}

func (h *hub) run(ctx context.Context, up *upstream) {
	defer h.end(up)
	o := up.key.options()
	feed, err := h.s.ns.Watch(ctx, nameservice.WatchOptions{ID: up.key.id, Prefix: o.Prefix, Concerns: o.Concerns,
		Kind: o.Kind, Interval: h.s.opts.PollInterval})
	up.err = guard.FromBackend(err)
	close(up.ready)
	if err != nil {
		return
	}
	for ev := range feed {
		h.fanout(up, &web.Event{Event: ev,
			// Read once for every stream, with the server's context.
			Record: sync.OnceValues(func() (*model.Record, error) {
				ctx, cancel := context.WithTimeout(h.s.ctx, h.s.opts.OpTimeout)
				defer cancel()
				return h.s.ns.Get(ctx, ev.ID)
			}),
			Data: sync.OnceValue(func() []byte {
				c := nswire.Change{ID: ev.ID.String(), Old: ev.Old, Deleted: ev.Deleted}
				if !ev.Deleted {
					v := ev.New
					c.Concern, c.New = ev.Concern.String(), &v
				}
				return web.Marshal(c)
			}),
		})
		if ev.Err != nil {
			return // the feed's last event; streams end, clients reconnect
		}
	}
}

// end ends the upstream and every stream on it.
func (h *hub) end(up *upstream) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for sub := range up.subs {
		delete(up.subs, sub)
		close(sub.events)
	}
	if h.ups[up.key] == up {
		delete(h.ups, up.key)
		h.s.metrics.upstreams.Dec()
	}
	up.cancel()
}

// fanout hands ev to every stream of up, dropping those with a full buffer.
func (h *hub) fanout(up *upstream, ev *web.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for sub := range up.subs {
		select {
		case sub.events <- ev:
		default:
			delete(up.subs, sub)
			close(sub.events)
			h.s.metrics.streamsDropped.Inc()
			sub.onDrop()
		}
	}
}
