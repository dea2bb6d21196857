package fluree

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/internal/nswire"
	"nameservice.dev/nameservice/model"
	"nameservice.dev/nameservice/server/auth"
	"nameservice.dev/nameservice/server/internal/web"
)

// sseKind is the kind of a record on Fluree's event stream.
func sseKind(k model.Kind) string {
	if k == model.GraphSource {
		return "graph-source"
	}
	return "ledger"
}

// eventsQuery is the query of GET /events.
type eventsQuery struct {
	all bool
	ids map[model.Kind]map[string]bool
}

// events serves GET /v1/fluree/events: the selected records that are not
// retracted, then the changes Fluree announces: a head or index published,
// or a graph source's config (ns-record), a retraction or purge
// (ns-retracted). Aliases the caller may not see are dropped silently.
func (a *API) events(w http.ResponseWriter, r *http.Request) {
	q, err := parseEventsQuery(r)
	if err != nil {
		WriteError(w, http.StatusBadRequest, err.Error())
		return
	}
	p := auth.FromContext(r.Context())
	stream := a.Subscribe(w, r, "")
	if stream == nil {
		return
	}
	defer stream.Close()
	ctx := stream.Ctx
	// Read before the answer starts, as Fluree does.
	st := &eventsState{a: a, p: p, q: q, kinds: map[string]model.Kind{}, last: map[string]string{}}
	recs := st.initial(ctx)
	if st.sse = nswire.NewSSEWriter(w); st.sse == nil {
		return
	}
	for _, rec := range recs {
		if !st.sendRecord(rec) {
			return
		}
	}
	stream.Pump(st.sse, func(ev *web.Event) bool {
		// On a feed error the client reconnects and gets the records again.
		return ev.Err == nil && st.change(ctx, ev)
	})
}

func parseEventsQuery(r *http.Request) (*eventsQuery, error) {
	v := r.URL.Query()
	q := &eventsQuery{ids: map[model.Kind]map[string]bool{model.Ledger: {}, model.GraphSource: {}}}
	if a := v.Get("all"); a != "" {
		if a != "true" && a != "false" {
			return nil, errors.New("invalid query string: all must be true or false")
		}
		q.all = a == "true"
	}
	for name, k := range map[string]model.Kind{"ledger": model.Ledger, "graph-source": model.GraphSource} {
		for _, a := range v[name] {
			if id, err := model.ParseID(a); err == nil {
				q.ids[k][id.String()] = true
			}
		}
	}
	return q, nil
}

type eventsState struct {
	a     *API
	sse   *nswire.SSEWriter
	p     *auth.Principal
	q     *eventsQuery
	kinds map[string]model.Kind // kinds of the records seen, for purges
	last  map[string]string     // the last state sent per record
}

func (st *eventsState) visible(k model.Kind, id string) bool {
	return (st.q.all || st.q.ids[k][id]) && st.p.CanEvent(k, id)
}

// mayKnow reports whether the stream may name id, of unknown kind.
func (st *eventsState) mayKnow(id model.ID) bool {
	return !id.IsZero() && (st.visible(model.Ledger, id.String()) || st.visible(model.GraphSource, id.String()))
}

// initial returns the records a stream starts with, ledgers then graph
// sources.
func (st *eventsState) initial(ctx context.Context) []*model.Record {
	var out []*model.Record
	for _, k := range []model.Kind{model.Ledger, model.GraphSource} {
		var recs []*model.Record
		if st.q.all {
			for rec, err := range st.a.NS.List(ctx, nameservice.ListOptions{Kind: k}) {
				var re *model.RecordError
				switch {
				case err == nil:
					recs = append(recs, rec)
				case errors.As(err, &re) && st.mayKnow(re.ID):
					st.a.skip(ctx, "events", re.ID, re.Err)
				}
			}
		} else {
			for _, s := range slices.Sorted(maps.Keys(st.q.ids[k])) {
				id, _ := model.ParseID(s)
				if rec, err := st.a.NS.Get(ctx, id); err == nil && rec.Kind == k && !rec.Retracted {
					recs = append(recs, rec)
				}
			}
		}
		for _, rec := range recs {
			st.kinds[rec.ID.String()] = rec.Kind
			if st.visible(rec.Kind, rec.ID.String()) {
				out = append(out, rec)
			}
		}
	}
	return out
}

// change sends what one change of the backend means to Fluree's peers.
func (st *eventsState) change(ctx context.Context, ev *web.Event) bool {
	id := ev.ID.String()
	if ev.Deleted {
		k, known := st.kinds[id]
		delete(st.kinds, id)
		if !known || !st.visible(k, id) {
			return true
		}
		return st.sendRetracted(k, id)
	}
	rec, err := ev.Record()
	if errors.Is(err, model.ErrNotFound) {
		return true
	}
	if err != nil {
		if !st.mayKnow(ev.ID) {
			return true
		}
		st.a.skip(ctx, "events", ev.ID, err)
		return st.sse.Comment("lookup of "+id+" failed") == nil
	}
	st.kinds[id] = rec.Kind
	if !st.visible(rec.Kind, id) {
		return true
	}
	switch {
	case ev.Concern == model.Status && rec.Retracted && ev.New.State() == model.StateRetracted:
		return st.sendRetracted(rec.Kind, id)
	case ev.New.Unborn():
		return true
	case ev.Concern == model.Head || ev.Concern == model.Index ||
		(ev.Concern == model.Config && rec.Kind == model.GraphSource):
		return st.sendRecord(rec)
	}
	return true
}

// emittedAt formats t as chrono's to_rfc3339.
func emittedAt(t time.Time) string {
	layout := "2006-01-02T15:04:05"
	switch ns := t.Nanosecond(); {
	case ns == 0:
	case ns%1_000_000 == 0:
		layout += ".000"
	case ns%1_000 == 0:
		layout += ".000000"
	default:
		layout += ".000000000"
	}
	return t.UTC().Format(layout) + "+00:00"
}

// ledgerEventRecord is the record of a ledger's ns-record event.
type ledgerEventRecord struct {
	LedgerID string `json:"ledger_id"`
	Branch   string `json:"branch"`
	heads
	Retracted    bool    `json:"retracted"`
	SourceBranch *string `json:"source_branch"`
	Branches     int64   `json:"branches"`
}

// nsEventData is the data of an ns-record or ns-retracted event.
type nsEventData struct {
	Action     string `json:"action"`
	Kind       string `json:"kind"`
	ResourceID string `json:"resource_id"`
	Record     any    `json:"record,omitempty"`
	EmittedAt  string `json:"emitted_at"`
}

// recordEvent returns the ID, state (its record) and data of rec's
// ns-record event.
func recordEvent(rec *model.Record, now time.Time) (evID, state string, data []byte, err error) {
	id := rec.ID.String()
	d := nsEventData{Action: "ns-record", Kind: sseKind(rec.Kind), ResourceID: id, EmittedAt: emittedAt(now)}
	if rec.Kind == model.Ledger {
		ns, err := nsRecordOf(rec)
		if err != nil {
			return "", "", nil, err
		}
		lr := ledgerEventRecord{LedgerID: id, Branch: ns.Branch, heads: ns.heads, Retracted: ns.Retracted, Branches: ns.Branches}
		if ns.SourceBranch != "" {
			lr.SourceBranch = &ns.SourceBranch
		}
		d.Record = lr
		evID = fmt.Sprintf("ledger:%s:%d:%d", id, ns.CommitT, ns.IndexT)
	} else {
		gs, err := graphSourceOf(rec)
		if err != nil {
			return "", "", nil, err
		}
		// The type as a string, the secrets redacted (the ID hashes them as is).
		sum := sha256.Sum256([]byte(gs.Config))
		gs.SourceType, gs.Config = flureeTypeString(rec.SourceType), redactConfig(gs.Config)
		d.Record = gs
		evID = fmt.Sprintf("graph-source:%s:%d:%s", id, gs.IndexT, hex.EncodeToString(sum[:4]))
	}
	return evID, string(web.Marshal(d.Record)), web.Marshal(d), nil
}

// sendRecord sends rec's ns-record event unless the stream announced the
// same state last. The state decides, not the event ID: an index
// republished at the same t with a new CID keeps its event ID, but peers
// must see it (Fluree announces it too).
func (st *eventsState) sendRecord(rec *model.Record) bool {
	evID, state, data, err := recordEvent(rec, st.a.Now())
	if err != nil {
		st.a.skip(context.Background(), "events", rec.ID, err)
		return st.sse.Comment("skipped: "+err.Error()) == nil
	}
	if st.last[rec.ID.String()] == state {
		return true // the same state again (a change Fluree does not announce)
	}
	st.last[rec.ID.String()] = state
	return st.sse.Event("ns-record", evID, data) == nil
}

func (st *eventsState) sendRetracted(k model.Kind, id string) bool {
	now := st.a.Now()
	evID := fmt.Sprintf("%s:%s:retracted:%d", sseKind(k), id, now.UnixMilli())
	st.last[id] = evID // no record's state
	data := nsEventData{Action: "ns-retracted", Kind: sseKind(k), ResourceID: id, EmittedAt: emittedAt(now)}
	return st.sse.Event("ns-retracted", evID, web.Marshal(data)) == nil
}
