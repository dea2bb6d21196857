package server

import (
	"nameservice.dev/nameservice/server/auth"
	"net/http"
	"sync"
)

// DefaultMaxStreamsPerPrincipal is the default of
// Options.MaxStreamsPerPrincipal.
const DefaultMaxStreamsPerPrincipal = 64

// streamQuota counts the event streams each principal holds, so that no
// tenant can take every one of the MaxStreams slots.
type streamQuota struct {
	max int

	mu   sync.Mutex
	held map[string]int
}

func (q *streamQuota) acquire(key string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.held[key] >= q.max {
		return false
	}
	q.held[key]++
	return true
}

func (q *streamQuota) release(key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.held[key]--; q.held[key] <= 0 {
		delete(q.held, key)
	}
}

// streamKey is what r's streams are counted under: its principal's key, or
// for a request without one (no authentication, or Fluree's events route
// open to anonymous watchers) its client address.
func streamKey(r *http.Request) string {
	if p := auth.FromContext(r.Context()); p != nil && p.Key() != "" {
		return p.Key()
	}
	return "addr:" + clientPrefix(r.RemoteAddr).String()
}

// admitStream admits one event stream for r: within MaxStreamsPerPrincipal
// for its principal (429 beyond) and MaxStreams in all (503 beyond), with
// Retry-After. It returns the release of the slots, or false when it has
// answered the refusal. Every route that opens a stream goes through it.
func (s *Server) admitStream(w http.ResponseWriter, r *http.Request) (release func(), ok bool) {
	refuse := func(reason, msg string, status int) (func(), bool) {
		s.metrics.streamsRefused.WithLabelValues(reason).Inc()
		w.Header().Set("Retry-After", "5")
		http.Error(w, msg, status)
		return nil, false
	}
	key := streamKey(r)
	if !s.perPrincipal.acquire(key) {
		return refuse("max_streams_per_principal", "too many event streams for this principal", http.StatusTooManyRequests)
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
