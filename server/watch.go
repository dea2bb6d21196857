package server

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/guard"
	"nameservice.dev/nameservice/internal/nswire"
	"nameservice.dev/nameservice/model"
	"nameservice.dev/nameservice/server/auth"
	"nameservice.dev/nameservice/server/fluree"
	"nameservice.dev/nameservice/server/internal/web"
)

// watch serves GET /ns/v1/watch?id=ID or ?prefix=P (and concerns, kind):
// the matching records ("record", or "failed"), "synced", then every
// selected change. It subscribes before it reads the records, so that no
// change falls between; clients drop a change the records show by its
// watermark.
func (s *Server) watch(w http.ResponseWriter, r *http.Request) {
	id, _, ok := s.read(w, r, in{need: needRead, query: true})
	if !ok {
		return
	}
	q, p := r.URL.Query(), auth.FromContext(r.Context())
	concerns, err := model.ParseConcerns(q.Get("concerns"))
	if err != nil {
		writeError(w, err)
		return
	}
	key := watchKey{prefix: q.Get("prefix"), kind: model.Kind(q.Get("kind"))}
	if len(concerns) < len(model.Concerns) { // "" for all, so that streams asking alike share one upstream
		slices.Sort(concerns)
		key.concerns = model.FormatConcerns(concerns)
	}
	// Checked here too: joining a running upstream asks the layer nothing,
	// and a refusal must be a 400, not an event of a stream.
	if err := guard.CheckWatch(key.options()); err != nil {
		writeError(w, err)
		return
	}
	if !id.IsZero() {
		key.id, key.prefix = id.String(), ""
	}
	stream := s.subscribe(w, r, key)
	if stream == nil {
		return
	}
	defer stream.Close()
	ctx := stream.Ctx
	sse := nswire.NewSSEWriter(w)
	if sse == nil {
		return
	}
	if !s.snapshot(ctx, sse, p, id, key) {
		return
	}
	if sse.Event(nswire.EventSynced, "", []byte("{}")) != nil {
		return
	}
	stream.Pump(sse, func(ev *web.Event) bool {
		if ev.Err != nil {
			return s.sendError(ctx, sse, "watch", guard.FromBackend(ev.Err))
		}
		if !p.CanRead(ev.ID.String()) {
			return true
		}
		return sse.Event(nswire.EventChange, "", ev.Data()) == nil
	})
}

// subscribe takes a stream slot and subscribes to the hub's upstream of key
// (web.Env.Subscribe). A stream has no write deadline: its answer never
// ends.
func (s *Server) subscribe(w http.ResponseWriter, r *http.Request, key watchKey) *web.Stream {
	release, ok := s.admitStream(w, r)
	if !ok {
		return nil
	}
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{})
	s.metrics.subscribers.Inc()
	ctx, cancel := context.WithCancel(r.Context())
	unhook := context.AfterFunc(s.ctx, cancel)
	end := func() {
		unhook()
		cancel()
		s.metrics.subscribers.Dec()
		release()
	}
	sub, err := s.hub.subscribe(ctx, key, func() {
		cancel()
		// A handler stuck writing to a client that does not read returns.
		_ = rc.SetWriteDeadline(time.Now())
	})
	if err != nil {
		end()
		err = s.public.Error(r.Context(), "watch", err)
		if _, isFluree := fluree.Rest(r.URL.Path); isFluree {
			fluree.WriteError(w, http.StatusInternalServerError, "watch failed: "+err.Error())
		} else {
			writeError(w, err)
		}
		return nil
	}
	return &web.Stream{Ctx: ctx, Events: sub.events, KeepAlive: s.opts.KeepAlive, Close: func() {
		s.hub.unsubscribe(sub)
		end()
	}}
}

// snapshot writes the records a watch starts from; false when it ended.
func (s *Server) snapshot(ctx context.Context, sse *nswire.SSEWriter, p *auth.Principal, id model.ID, key watchKey) bool {
	if !id.IsZero() {
		rec, err := s.ns.Get(ctx, id)
		switch {
		case errors.Is(err, model.ErrNotFound):
			return true
		case err != nil:
			return s.sendError(ctx, sse, "get "+id.String(), err)
		case key.kind != "" && rec.Kind != key.kind:
			return true
		}
		return sse.Event(nswire.EventRecord, "", web.Marshal(rec)) == nil
	}
	for rec, err := range s.ns.List(ctx, nameservice.ListOptions{Prefix: key.prefix, Kind: key.kind, IncludeRetracted: true}) {
		var re *model.RecordError
		switch {
		case errors.As(err, &re):
			if visibleFailure(p, re) && sse.Event(nswire.EventFailed, "", web.Marshal(s.public.Failure(ctx, re))) != nil {
				return false
			}
			continue
		case err != nil:
			return s.sendError(ctx, sse, "list", err)
		}
		if p.CanRead(rec.ID.String()) && sse.Event(nswire.EventRecord, "", web.Marshal(rec)) != nil {
			return false
		}
	}
	return true
}

// sendError sends the "error" event of err, met in op, which ends a watch.
func (s *Server) sendError(ctx context.Context, sse *nswire.SSEWriter, op string, err error) bool {
	_, b := errorBody(s.public.Error(ctx, op, err))
	_ = sse.Event(nswire.EventError, "", b)
	return false
}

// DefaultMaxStreamsPerPrincipal is the default of
// Options.MaxStreamsPerPrincipal.
const DefaultMaxStreamsPerPrincipal = 64

// quota counts what each key holds, at most max: the streams of a
// principal (so that no tenant takes every slot), the connections of an
// address.
type quota[K comparable] struct {
	max int

	mu   sync.Mutex
	held map[K]int
}

func (q *quota[K]) acquire(key K) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.held[key] >= q.max {
		return false
	}
	q.held[key]++
	return true
}

func (q *quota[K]) release(key K) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.held[key]--; q.held[key] <= 0 {
		delete(q.held, key)
	}
}

// admitStream admits one event stream for r, within MaxStreamsPerPrincipal
// (429 beyond) and MaxStreams (503 beyond). It returns the release of the
// slots, or false when it has answered the refusal.
func (s *Server) admitStream(w http.ResponseWriter, r *http.Request) (release func(), ok bool) {
	refuse := func(reason, msg string, status int) (func(), bool) {
		s.metrics.streamsRefused.WithLabelValues(reason).Inc()
		w.Header().Set("Retry-After", "5")
		http.Error(w, msg, status)
		return nil, false
	}
	// The streams of a principal, or without one of a client address.
	key := "addr:" + clientPrefix(r.RemoteAddr).String()
	if p := auth.FromContext(r.Context()); p != nil && p.Key() != "" {
		key = p.Key()
	}
	if !s.perPrincipal.acquire(key) {
		return refuse("max_streams_per_principal", "too many event streams for this principal",
			http.StatusTooManyRequests)
	}
	select {
	case s.streams <- struct{}{}:
	default:
		s.perPrincipal.release(key)
		return refuse("max_streams", "too many event streams", http.StatusServiceUnavailable)
	}
	return func() {
		<-s.streams
		s.perPrincipal.release(key)
	}, true
}
