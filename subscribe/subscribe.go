// Package subscribe follows changes to records from a saved map of
// watermarks, so that a subscriber that stops and resumes misses no change
// and sees none twice. It is built only on the portable API (Watch and
// List), as etcd's concurrency package is built on its KV.
package subscribe

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/model"
)

// Watermarks is one record's entry in a subscription map: its kind and the
// watermark of each concern the subscriber has seen.
type Watermarks struct {
	Kind       nameservice.Kind `json:"kind"`
	SourceType string           `json:"source_type,omitempty"`
	CommitT    int64            `json:"commit_t,omitempty"`
	IndexT     int64            `json:"index_t"`
	StatusV    int64            `json:"status_v"`
	ConfigV    int64            `json:"config_v"`
}

// at returns the field of w that holds concern c's watermark (config's for
// an unknown c).
func (w *Watermarks) at(c nameservice.Concern) *int64 {
	if !c.Valid() {
		c = nameservice.Config
	}
	return [...]*int64{&w.CommitT, &w.IndexT, &w.StatusV, &w.ConfigV}[c]
}

// Map is the state of a subscriber, in the spec's form
// {"subscriptions": {"mydb:main": {"kind": "ledger", "commit_t": 42, ...}}}.
// Save it and pass it back in Options.From to resume.
type Map struct {
	Subscriptions map[string]Watermarks `json:"subscriptions"`
}

// Options select what a subscription follows.
type Options struct {
	Prefix   string        // IDs starting with Prefix ("" for all)
	Interval time.Duration // polling interval for drivers without a change feed
	From     *Map          // resume from this map; nil starts from the current state
	// Concerns, when not empty, are the only concerns followed (as
	// nameservice.WatchOptions.Concerns); the map keeps the others at the
	// watermarks it holds.
	Concerns []nameservice.Concern
	// Kind, when set, is the only kind of record followed.
	Kind nameservice.Kind
}

// Subscriber follows changes by comparing watermarks with its map. Read it
// with Next from one goroutine.
type Subscriber struct {
	mu    sync.Mutex
	m     map[string]Watermarks
	kinds map[string]*nameservice.Record // kinds of records first seen while catching up
	raw   chan nameservice.Event         // catch-up events, then the watch feed, unfiltered
	ns    *nameservice.NameService
	opts  driver.WatchOptions // the concerns and kind followed
}

// ErrEnded is returned by Next once the subscription's context
// is done.
var ErrEnded = errors.New("subscription ended")

// Next returns the next change, in watermark order per ID and concern, each
// watermark at most once, and records it in the map before returning. It
// returns ctx's error when ctx is done, ErrEnded after the
// subscription's own context is done, and the feed's error if it fails.
func (s *Subscriber) Next(ctx context.Context) (nameservice.Event, error) {
	for {
		select {
		case <-ctx.Done():
			return nameservice.Event{}, ctx.Err()
		case ev, ok := <-s.raw:
			if !ok {
				return nameservice.Event{}, ErrEnded
			}
			if ev.Err != nil {
				return nameservice.Event{}, fmt.Errorf("subscription: %w", ev.Err)
			}
			s.learnKind(ctx, ev)
			if ev, news := s.take(ev); news {
				return ev, nil
			}
		}
	}
}

// Map returns a copy of the subscription map holding exactly the events Next
// has returned, for saving: a subscriber resumed from it misses nothing it
// had not yet returned.
func (s *Subscriber) Map() Map {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Map{Subscriptions: maps.Clone(s.m)}
}

// Start follows the records under opts.Prefix. Without opts.From it
// starts from the current state and reports only later changes. With a
// saved map it first reports, per concern, the current value of every
// watermark above the saved one (and a Deleted event for records gone), so a
// resumed subscriber misses no change, then follows Watch. An event whose
// watermark the map already holds is dropped, so no change is reported
// twice; so, after a new record's first event, are its unborn concerns
// (watermark 0: nothing to fetch). A watermark moved back (ResetHead, a
// record purged and created again, live or while no one was subscribed)
// is reported, and followed from there.
func Start(ctx context.Context, ns *nameservice.NameService, opts Options) (*Subscriber, error) {
	// Watch first, then read the state: a change between the two is seen by
	// the watch and dropped as a duplicate if the read already caught it.
	wo := nameservice.WatchOptions{Prefix: opts.Prefix, Interval: opts.Interval, Concerns: opts.Concerns, Kind: opts.Kind}
	feed, err := ns.Watch(ctx, wo)
	if err != nil {
		return nil, err
	}
	s := &Subscriber{m: map[string]Watermarks{}, kinds: map[string]*nameservice.Record{}, raw: make(chan nameservice.Event, 64),
		ns: ns, opts: driver.WatchOptions{Concerns: opts.Concerns, Kind: opts.Kind}}
	if opts.From != nil {
		for id, w := range opts.From.Subscriptions {
			if strings.HasPrefix(id, opts.Prefix) && (opts.Kind == "" || w.Kind == opts.Kind) {
				s.m[id] = w
			}
		}
	}
	var catchUp []nameservice.Event
	seen := map[string]bool{}
	for rec, err := range ns.List(ctx, nameservice.ListOptions{Prefix: opts.Prefix, Kind: opts.Kind, IncludeRetracted: true}) {
		if err != nil {
			return nil, fmt.Errorf("subscribe: %w", err)
		}
		seen[rec.ID.String()] = true
		if opts.From == nil {
			s.m[rec.ID.String()] = watermarksOf(rec)
			continue
		}
		s.kinds[rec.ID.String()] = rec
		for _, ev := range driverutil.Selected(s.opts, nil, rec) {
			if w, ok := s.m[rec.ID.String()]; ok && ev.New.V < *w.at(ev.Concern) {
				ev.Old = *w.at(ev.Concern) // moved back (reset, or purged and created again) meanwhile
			}
			catchUp = append(catchUp, ev)
		}
	}
	for id := range s.m {
		if !seen[id] {
			pid, _ := nameservice.ParseID(id)
			catchUp = append(catchUp, nameservice.Event{ID: pid, Deleted: true})
		}
	}
	go s.forward(ctx, feed, catchUp)
	return s, nil
}

func watermarksOf(rec *nameservice.Record) Watermarks {
	w := Watermarks{Kind: rec.Kind, SourceType: rec.SourceType}
	for _, c := range model.Concerns {
		if v := rec.Value(c); v != nil {
			*w.at(c) = v.V
		}
	}
	return w
}

func (s *Subscriber) forward(ctx context.Context, feed <-chan nameservice.Event, catchUp []nameservice.Event) {
	defer close(s.raw)
	for _, ev := range catchUp {
		if !driverutil.Send(ctx, s.raw, ev) {
			return
		}
	}
	for ev := range feed {
		if !driverutil.Send(ctx, s.raw, ev) || ev.Err != nil {
			return
		}
	}
}

// learnKind reads the record of ev when it is new to the map and its kind
// cannot be told from the events followed: only a ledger has a head, and a
// new ledger's head event comes first, but a subscriber that does not
// follow heads (nor one kind) learns it from the record itself, once. When
// the record cannot be read (purged since: its Deleted event follows) the
// kind is guessed as for a subscriber of every concern.
func (s *Subscriber) learnKind(ctx context.Context, ev nameservice.Event) {
	if ev.Deleted || s.opts.Kind != "" || s.opts.Watches(nameservice.Head) {
		return
	}
	id := ev.ID.String()
	s.mu.Lock()
	_, had := s.m[id]
	known := s.kinds[id] != nil
	s.mu.Unlock()
	if had || known {
		return
	}
	if rec, err := s.ns.Lookup(ctx, id); err == nil {
		s.mu.Lock()
		s.kinds[id] = rec
		s.mu.Unlock()
	}
}

// take records ev in the map when it is news, and reports whether it was,
// returning ev with Old set to the map's watermark.
func (s *Subscriber) take(ev nameservice.Event) (nameservice.Event, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := ev.ID.String()
	w, had := s.m[id]
	if ev.Deleted {
		delete(s.m, id)
		return ev, had
	}
	at := w.at(ev.Concern)
	// A change from the watermark the map holds to a lower one moved it
	// back (a reset-head, a record purged and created again): news.
	back := had && ev.Old == *at && ev.New.V < *at
	if had && ev.New.V <= *at && !back {
		return ev, false
	}
	switch rec := s.kinds[id]; {
	case rec != nil:
		w.Kind, w.SourceType = rec.Kind, rec.SourceType
	case s.opts.Kind != "":
		w.Kind = s.opts.Kind
	case ev.Concern == nameservice.Head:
		w.Kind = nameservice.Ledger // only ledgers have a head; a new record's head event comes first
	case !had:
		w.Kind = nameservice.GraphSource
	}
	ev.Old, *at = *at, ev.New.V
	s.m[id] = w
	return ev, true
}
