package web

import (
	"context"
	"iter"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/nswire"
	"nameservice.dev/nameservice/model"
	"nameservice.dev/nameservice/server/auth"
)

// Lister lists the records a principal may read, reading nothing outside
// its scope.
type Lister interface {
	// Scan yields every record of q that p may read, in ID order, and those
	// that could not be read as *model.RecordError errors; another error
	// ends it. It holds one backend page at a time.
	Scan(ctx context.Context, p *auth.Principal, q nameservice.ListOptions) iter.Seq2[*model.Record, error]
	// Page reads the page of q for p at token ("" for the first), of at
	// most size entries. A malformed q, or a token of another query, scope
	// or key, is refused with model.ErrInvalidArgument.
	Page(ctx context.Context, p *auth.Principal, q nameservice.ListOptions, token string, size int) (Page, error)
}

// Page is one page of a listing.
type Page struct {
	Records []*model.Record
	Failed  []*model.RecordError // the records that could not be read
	Next    string               // the sealed token of the next page; "" when none
}

// Event is one change of the backend, shared by every stream: none may
// change it. What streams derive from it is made once.
type Event struct {
	driver.Event
	Record func() (*model.Record, error) // the record as read after it
	Data   func() []byte                 // of its "change" on /ns/v1/watch
}

// Stream is one client's subscription to the hub.
type Stream struct {
	// Ctx ends when the client goes, the server closes or the hub drops
	// the stream for not keeping up.
	Ctx       context.Context
	Events    <-chan *Event // closed when the watch ends or the stream is dropped
	KeepAlive time.Duration
	Close     func() // ends the subscription and releases the stream's slot
}

// Pump writes keep-alive comments and hands each event to handle, until the
// stream ends, a write fails or handle returns false.
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
