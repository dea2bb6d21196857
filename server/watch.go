package server

import (
	"context"
	"errors"
	"net/http"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/nswire"
)

// stream holds one of the MaxStreams slots and ends when the client goes,
// or the server closes. It answers 503 and returns nil when every slot is
// taken.
func (s *Server) stream(w http.ResponseWriter, r *http.Request) (context.Context, func()) {
	select {
	case s.streams <- struct{}{}:
	default:
		w.Header().Set("Retry-After", "5")
		http.Error(w, "too many event streams", http.StatusServiceUnavailable)
		return nil, nil
	}
	s.metrics.subscribers.Inc()
	ctx, cancel := context.WithCancel(r.Context())
	go func() {
		select {
		case <-s.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		cancel()
		s.metrics.subscribers.Dec()
		<-s.streams
	}
}

// watch serves GET /ns/v1/watch?id=ID or ?prefix=P: the matching records
// ("record" events, or "failed" for one that cannot be read), "synced", then
// every change ("change"), with keep-alive comments. The watch starts
// before the records are read, so no change falls between the two; a change
// the records already show comes again as an event, and clients drop it by
// its watermark.
func (s *Server) watch(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p := principalOf(r.Context())
	var id driver.ID
	if v := q.Get("id"); v != "" {
		var err error
		if id, err = driver.ParseID(v); err != nil {
			writeError(w, err)
			return
		}
		if !canRead(w, r, id) {
			return
		}
	}
	prefix := q.Get("prefix")
	ctx, done := s.stream(w, r)
	if ctx == nil {
		return
	}
	defer done()
	wo := nameservice.WatchOptions{Prefix: prefix, Interval: s.opts.PollInterval}
	if !id.IsZero() {
		wo.ID = id.String()
	}
	feed, err := s.feeds.Watch(ctx, wo)
	if err != nil {
		writeError(w, s.public(ctx, "watch", fromBackend(err)))
		return
	}
	sse := nswire.NewSSEWriter(w)
	if sse == nil {
		return
	}
	if !s.snapshot(ctx, sse, p, id, prefix) {
		return
	}
	if sse.Event(nswire.EventSynced, "", []byte("{}")) != nil {
		return
	}
	s.pump(ctx, sse, feed, func(ev driver.Event) bool {
		if ev.Err != nil {
			_, b := errorBody(s.public(ctx, "watch", fromBackend(ev.Err)))
			_ = sse.Event(nswire.EventError, "", b)
			return false
		}
		if !p.CanRead(ev.ID.String()) {
			return true
		}
		c := nswire.Change{ID: ev.ID.String(), Old: ev.Old, Deleted: ev.Deleted}
		if !ev.Deleted {
			v := ev.New
			c.Concern, c.New = ev.Concern.String(), &v
		}
		return sse.Event(nswire.EventChange, "", marshal(c)) == nil
	})
}

// pump writes a keep-alive comment every KeepAlive and hands each event of
// feed to handle, until ctx ends, the feed closes, a write fails or handle
// returns false.
func (s *Server) pump(ctx context.Context, sse *nswire.SSEWriter, feed <-chan driver.Event, handle func(driver.Event) bool) {
	keep := time.NewTicker(s.opts.KeepAlive)
	defer keep.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-keep.C:
			if sse.Comment("") != nil {
				return
			}
		case ev, ok := <-feed:
			if !ok || !handle(ev) {
				return
			}
		}
	}
}

// snapshot writes the records a watch starts from; false when the stream
// ended.
func (s *Server) snapshot(ctx context.Context, sse *nswire.SSEWriter, p *Principal, id driver.ID, prefix string) bool {
	if !id.IsZero() {
		rec, err := s.d.Get(ctx, id)
		switch {
		case errors.Is(err, driver.ErrNotFound):
			return true
		case err != nil:
			_, b := errorBody(s.public(ctx, "get "+id.String(), err))
			_ = sse.Event(nswire.EventError, "", b)
			return false
		}
		return sse.Event(nswire.EventRecord, "", marshal(rec)) == nil
	}
	for rec, err := range s.ns.List(ctx, nameservice.ListOptions{Prefix: prefix, IncludeRetracted: true}) {
		var re *driver.RecordError
		switch {
		case errors.As(err, &re):
			if visibleFailure(p, re) && sse.Event(nswire.EventFailed, "", marshal(s.publicFailure(ctx, re))) != nil {
				return false
			}
			continue
		case err != nil:
			_, b := errorBody(s.public(ctx, "list", err))
			_ = sse.Event(nswire.EventError, "", b)
			return false
		}
		if p.CanRead(rec.ID.String()) && sse.Event(nswire.EventRecord, "", marshal(rec)) != nil {
			return false
		}
	}
	return true
}
