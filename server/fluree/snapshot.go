package fluree

import (
	"bufio"
	"context"
	"errors"
	"log/slog"
	"net/http"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/model"
	"nameservice.dev/nameservice/server/auth"
	"nameservice.dev/nameservice/server/internal/web"
)

// snapshot serves GET /v1/fluree/nameservice/snapshot: every record the
// caller may see, ledgers then graph sources, written as they are read. A
// record that cannot be read, or that Fluree's wire cannot carry, is left
// out (see skip).
func (a *API) snapshot(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p := auth.FromContext(ctx)
	// Until the buffer first fills nothing is sent, so that an early failure
	// can still get an error status; a later one can only cut the answer
	// short (JSON that does not parse).
	sink := &sentWriter{w: w}
	sn := &snapshotWriter{a: a, ctx: ctx, out: bufio.NewWriterSize(sink, 64<<10), failed: map[model.ID]bool{},
		gsVisible: p.ListsGraphSources()}
	// One pass writes the ledgers and keeps the graph sources (usually
	// few); past maxSpool bytes of those, a second pass lists them.
	_, _ = sn.out.WriteString(`{"ledgers":[`)
	err := sn.pass(p, "")
	if err == nil {
		_, _ = sn.out.WriteString(`],"graph_sources":[`)
		sn.n = 0
		if sn.spill {
			err = sn.pass(p, model.GraphSource)
		}
	}
	switch {
	case err != nil && sink.sent:
		a.Log.Warn("answer cut short by a failure of the backend")
		return
	case err != nil:
		sn.out.Reset(nil)
		WriteError(w, http.StatusInternalServerError, "Failed to list ledgers: "+a.Public.Error(ctx, "list", err).Error())
		return
	}
	for _, b := range sn.spool {
		sn.entry(b)
	}
	_, _ = sn.out.WriteString("]}")
	_ = sn.out.Flush()
}

// maxSpool bounds the graph sources a snapshot keeps.
const maxSpool = 1 << 20

type snapshotWriter struct {
	a         *API
	ctx       context.Context
	out       *bufio.Writer
	gsVisible bool
	failed    map[model.ID]bool // counted once, though listed in both passes
	n         int               // entries written in the current array
	spool     [][]byte          // graph sources for after the ledgers
	spoolSize int
	spill     bool // the graph sources did not fit the spool
}

// pass lists the records of kind ("" for all), writing them but the graph
// sources of an unfiltered pass, which it spools.
func (sn *snapshotWriter) pass(p *auth.Principal, kind model.Kind) error {
	for rec, err := range sn.a.Lister.Scan(sn.ctx, p, nameservice.ListOptions{Kind: kind, IncludeRetracted: true}) {
		var re *model.RecordError
		switch {
		case errors.As(err, &re):
			if !sn.failed[re.ID] || re.ID.IsZero() {
				sn.failed[re.ID] = true
				sn.a.skip(sn.ctx, "snapshot", re.ID, re.Err)
			}
			continue
		case err != nil:
			return err
		case rec.Kind == model.GraphSource && !sn.gsVisible:
			continue
		}
		b, err := snapshotEntry(rec)
		switch {
		case err != nil:
			sn.a.skip(sn.ctx, "snapshot", rec.ID, err)
		case kind == "" && rec.Kind == model.GraphSource:
			sn.keep(b)
		default:
			sn.entry(b)
		}
	}
	return nil
}

func (sn *snapshotWriter) keep(b []byte) {
	if sn.spill {
		return
	}
	if sn.spoolSize += len(b); sn.spoolSize > maxSpool {
		sn.spool, sn.spill = nil, true
		return
	}
	sn.spool = append(sn.spool, b)
}

func (sn *snapshotWriter) entry(b []byte) {
	if sn.n > 0 {
		_, _ = sn.out.WriteString(",")
	}
	_, _ = sn.out.Write(b)
	sn.n++
}

// snapshotEntry is rec as the snapshot lists it.
func snapshotEntry(rec *model.Record) ([]byte, error) {
	if rec.Kind == model.Ledger {
		ns, err := nsRecordOf(rec)
		return web.Marshal(ns), err
	}
	gs, err := graphSourceOf(rec)
	return web.Marshal(gs), err
}

// Reasons a record is left out of Fluree's answers.
const (
	skipUnreadable     = "unreadable"
	skipNotExpressible = "not_expressible"
)

// skip logs (by ID only) and counts a record left out of a Fluree answer of
// route: one that cannot be read or that Fluree's wire cannot carry.
func (a *API) skip(ctx context.Context, route string, id model.ID, err error) {
	reason := skipUnreadable
	if _, ok := errors.AsType[errNotExpressible](err); ok {
		reason = skipNotExpressible
	}
	a.skipped.WithLabelValues(route, reason).Inc()
	name := id.String()
	if id.IsZero() {
		name = "(an object with no ID)"
	}
	a.Log.LogAttrs(ctx, slog.LevelWarn, "record left out of a Fluree answer", slog.String("route", route),
		slog.String("id", name), slog.String("reason", reason), slog.String("code", model.Code(err).String()))
}

// sentWriter sends the status line of a 200 JSON answer before its first
// bytes.
type sentWriter struct {
	w    http.ResponseWriter
	sent bool // part of the answer went out
}

func (s *sentWriter) Write(b []byte) (int, error) {
	if !s.sent {
		s.sent = true
		s.w.Header().Set("Content-Type", "application/json")
		s.w.WriteHeader(http.StatusOK)
	}
	return s.w.Write(b)
}
