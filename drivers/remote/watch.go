package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/internal/nswire"
	"nameservice.dev/nameservice/model"
)

// maxEventBytes bounds one line of an event stream.
const maxEventBytes = 8 << 20

// Watch implements driver.Watcher over the server's event stream, which
// selects the concerns and kind of opts at the server. It
// returns once the server has sent the current records, so every change
// after the return is reported. When the stream breaks it reconnects (with
// backoff, until ctx is done) and resumes by snapshot: the records the new
// stream starts with are compared with the ones it knows, and every
// difference is reported as a change, so nothing is missed, though changes
// made while disconnected arrive merged, one event per concern. A refusal
// by the server (a 4xx: bad token, out of scope) ends the feed with Err;
// the stream limits (429, 503) are waited out. A first connect they refuse
// returns an error wrapping ErrThrottled or ErrUnavailable.
func (d *Driver) Watch(ctx context.Context, opts driver.WatchOptions) (<-chan driver.Event, error) {
	w := &watcher{d: d, opts: opts}
	st, snap, err := w.connect(ctx)
	if err != nil {
		return nil, err
	}
	w.known = snap
	ch := make(chan driver.Event, 64)
	go w.run(ctx, st, ch)
	return ch, nil
}

type watcher struct {
	d     *Driver
	opts  driver.WatchOptions
	known map[model.ID]*model.Record // what the feed has reported, per record
}

// stream is an open event stream past its snapshot.
type stream struct {
	body io.ReadCloser
	r    *nswire.SSEReader
}

// permanent marks a refusal that reconnecting will not cure.
type permanent struct{ error }

// connect opens the stream and reads the snapshot it starts with. Records
// that failed to read keep the state known before (snapshot holds the
// previous record for them).
func (w *watcher) connect(ctx context.Context) (*stream, map[model.ID]*model.Record, error) {
	q := nswire.Query(map[string]string{
		"prefix": w.opts.Prefix, "concerns": model.FormatConcerns(w.opts.Concerns), "kind": string(w.opts.Kind),
	})
	if !w.opts.ID.IsZero() {
		q.Set("id", w.opts.ID.String())
	}
	req, err := w.d.newRequest(ctx, http.MethodGet, "/watch?"+q.Encode(), nil)
	if err != nil {
		return nil, nil, permanent{fmt.Errorf("remote: watch: %w", err)}
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := w.d.client.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("remote: watch: %w", transportError(err))
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		r := &response{status: resp.StatusCode, body: b}
		if resp.StatusCode == http.StatusTooManyRequests {
			// The principal's stream limit: a slot comes free when one of
			// its streams ends.
			return nil, nil, fmt.Errorf("remote: watch: %w: HTTP %d: %s", model.ErrThrottled, resp.StatusCode, snippet(b))
		}
		if resp.StatusCode >= 400 && resp.StatusCode < 500 {
			return nil, nil, permanent{r.err("watch")}
		}
		return nil, nil, fmt.Errorf("remote: watch: %w: HTTP %d", model.ErrUnavailable, resp.StatusCode)
	}
	st := &stream{body: resp.Body, r: nswire.NewSSEReader(resp.Body, maxEventBytes)}
	snap := map[model.ID]*model.Record{}
	for {
		ev, err := st.r.Next()
		if err != nil {
			resp.Body.Close()
			return nil, nil, fmt.Errorf("remote: watch: %w: stream ended before its snapshot: %v", model.ErrUnavailable, err)
		}
		switch ev.Name {
		case nswire.EventRecord:
			var rec model.Record
			if err := rec.UnmarshalJSON([]byte(ev.Data)); err != nil {
				resp.Body.Close()
				return nil, nil, fmt.Errorf("remote: watch: %w: a record of the snapshot does not decode: %v", model.ErrInternal, err)
			}
			snap[rec.ID] = &rec
		case nswire.EventFailed:
			var f nswire.RecordError
			if json.Unmarshal([]byte(ev.Data), &f) == nil && f.ID != "" {
				if id, err := model.ParseID(f.ID); err == nil && w.known[id] != nil {
					snap[id] = w.known[id]
				}
			}
		case nswire.EventError:
			resp.Body.Close()
			return nil, nil, fmt.Errorf("remote: watch: %w", streamError(ev.Data))
		case nswire.EventSynced:
			return st, snap, nil
		}
	}
}

func streamError(data string) error {
	if e, ours := (&response{body: []byte(data)}).serverError(); ours {
		return e.ToDriverError()
	}
	return fmt.Errorf("%w: %s", model.ErrUnavailable, data)
}

func (w *watcher) run(ctx context.Context, st *stream, ch chan<- driver.Event) {
	defer close(ch)
	for {
		// Why the stream broke does not matter: it is reopened either way,
		// and only a refusal to reopen it ends the feed.
		_ = w.follow(ctx, st, ch)
		st.body.Close()
		var snap map[model.ID]*model.Record
		var err error
		for attempt := 1; ; attempt++ {
			if driverutil.Sleep(ctx, driverutil.Jitter(500*time.Millisecond, 30*time.Second, attempt)) != nil {
				return
			}
			if st, snap, err = w.connect(ctx); err == nil {
				break
			}
			if _, perm := err.(permanent); perm {
				driverutil.Send(ctx, ch, driver.Event{Err: err})
				return
			}
		}
		// Resume: report the differences between the known state and the
		// new snapshot, which becomes the known state.
		prev := w.known
		w.known = snap
		for _, e := range driverutil.Changes(w.opts, prev, snap) {
			if !driverutil.Send(ctx, ch, e) {
				st.body.Close()
				return
			}
		}
	}
}

// follow reports the stream's changes until it breaks or ctx is done.
func (w *watcher) follow(ctx context.Context, st *stream, ch chan<- driver.Event) error {
	stop := context.AfterFunc(ctx, func() { st.body.Close() })
	defer stop()
	for {
		ev, err := st.r.Next()
		if err != nil {
			return err
		}
		switch ev.Name {
		case nswire.EventChange:
			var c nswire.Change
			if err := json.Unmarshal([]byte(ev.Data), &c); err != nil {
				return err
			}
			if e, ok := w.take(c); ok && !driverutil.Send(ctx, ch, e) {
				return ctx.Err()
			}
		case nswire.EventError:
			return streamError(ev.Data)
		}
	}
}

// take updates the known state with a change and returns the event to
// report, unless the state already holds it (a change the snapshot showed).
func (w *watcher) take(c nswire.Change) (driver.Event, bool) {
	id, err := model.ParseID(c.ID)
	if err != nil {
		return driver.Event{}, false
	}
	if c.Deleted {
		delete(w.known, id)
		return driver.Event{ID: id, Deleted: true}, true
	}
	concern, err := model.ParseConcern(c.Concern)
	if err != nil || c.New == nil || !w.opts.Watches(concern) {
		return driver.Event{}, false
	}
	rec := w.known[id]
	if rec == nil {
		// The server sends only changes of the kind asked for.
		rec = &model.Record{ID: id, Meta: model.Meta{Kind: w.opts.Kind}}
		w.known[id] = rec
	}
	old := c.Old
	if cur := rec.Value(concern); cur != nil {
		// A change below the known watermark is one the snapshot already
		// passed, unless the change itself moved the watermark back (a
		// reset-head; a record purged and created again between polls).
		back := c.New.V < c.Old
		if c.New.Equal(*cur) || c.New.V < cur.V && !back {
			return driver.Event{}, false
		}
		old = cur.V
	}
	rec.SetValue(concern, c.New.Clone())
	return driver.Event{ID: id, Concern: concern, Old: old, New: c.New.Clone()}, true
}
