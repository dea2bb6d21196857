package web

import (
	"context"
	"iter"
	"net/http"
	"sync"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/nswire"
	"nameservice.dev/nameservice/model"
	"nameservice.dev/nameservice/server/auth"
)

// Hub opens event streams: package server's hub, which runs one watch of
// the backend per key the open streams need and fans its changes out.
type Hub interface {
	// Subscribe takes a stream slot for r and subscribes it to the changes
	// of record id ("" for every record), answering the request itself
	// (and returning nil) when either is refused. Every change after the
	// return is sent, so a stream reads its records after subscribing.
	// Close the stream when done.
	Subscribe(w http.ResponseWriter, r *http.Request, id string) *Stream
}

// Lister lists the records a principal may read, reading nothing outside
// its scope: package server's listing.
type Lister interface {
	// Scan yields every record of q (Prefix and the filters) that p may
	// read, in ID order, and the records that could not be read as
	// *model.RecordError errors; another error ends it. It holds one
	// backend page at a time.
	Scan(ctx context.Context, p *auth.Principal, q nameservice.ListOptions) iter.Seq2[*model.Record, error]
	// Page reads the page of q for p at page token ("" for the first),
	// of at most size entries. A malformed q (guard.CheckList), and a
	// token of another query, scope or server key, are refused with
	// model.ErrInvalidArgument.
	Page(ctx context.Context, p *auth.Principal, q nameservice.ListOptions, token string, size int) (Page, error)
}

// Page is one page of a listing.
type Page struct {
	Records []*model.Record
	Failed  []*model.RecordError // the records that could not be read
	Next    string               // the sealed token of the next page; "" when none
}

// Event is one change of the backend, shared by every stream that gets
// it: none may change it. What streams derive from it is made once, by
// the first stream that needs it.
type Event struct {
	driver.Event
	lookup   func(model.ID) (*model.Record, error)
	recOnce  sync.Once
	rec      *model.Record
	recErr   error
	dataOnce sync.Once
	data     []byte
}

// NewEvent returns ev as streams share it; lookup reads its record (see
// Record).
func NewEvent(ev driver.Event, lookup func(model.ID) (*model.Record, error)) *Event {
	return &Event{Event: ev, lookup: lookup}
}

// Record returns the record of the event as read after it, read once for
// every stream (with the server's context, not a stream's).
func (e *Event) Record() (*model.Record, error) {
	e.recOnce.Do(func() { e.rec, e.recErr = e.lookup(e.ID) })
	return e.rec, e.recErr
}

// Data returns encode's data of the event, made once for every stream.
// One route family uses it (/ns/v1/watch, for its "change" events): the
// first encode called is the one every stream gets.
func (e *Event) Data(encode func(driver.Event) []byte) []byte {
	e.dataOnce.Do(func() { e.data = encode(e.Event) })
	return e.data
}

// Stream is one client's subscription to the hub.
type Stream struct {
	// Ctx ends when the client goes, the server closes or the hub drops
	// the stream for not keeping up.
	Ctx context.Context
	// Events are the changes; the hub closes it when its watch ends or
	// the stream is dropped.
	Events    <-chan *Event
	KeepAlive time.Duration // the interval of the keep-alive comments
	// Close ends the subscription and releases the stream's slot.
	Close func()
}

// Pump writes a keep-alive comment every keep-alive interval and hands
// each event to handle, until the stream's context ends, its events end, a
// write fails or handle returns false.
func (s *Stream) Pump(sse *nswire.SSEWriter, handle func(*Event) bool) {
	keep := time.NewTicker(s.KeepAlive)
	defer keep.Stop()
	for {
		select {
		case <-s.Ctx.Done():
			return
		case <-keep.C:
			if sse.Comment("") != nil {
				return
			}
		case ev, ok := <-s.Events:
			// A dropped stream's channel still holds events: the
			// canceled context ends it before any is written.
			if !ok || s.Ctx.Err() != nil || !handle(ev) {
				return
			}
		}
	}
}
