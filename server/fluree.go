package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/model"
	"nameservice.dev/nameservice/server/auth"
)

// flureeBase is the prefix of Fluree's versioned API. The same routes are
// also served under flureeBare, where a Fluree client given the server's
// bare origin sends them (its HTTP client appends "/fluree" to a base URL).
const (
	flureeBase = "/v1/fluree"
	flureeBare = "/fluree"
)

// flureeRest returns path without its Fluree prefix, and whether it had one.
func flureeRest(path string) (string, bool) {
	for _, p := range []string{flureeBase + "/", flureeBare + "/"} {
		if strings.HasPrefix(path, p) {
			return path[len(p)-1:], true
		}
	}
	return path, false
}

// Fluree's error types (fluree-vocab errors.rs).
const (
	errTypeBadRequest   = "err:api/BadRequest"
	errTypeNotFound     = "err:api/NotFound"
	errTypeJSONParse    = "err:parse/JsonParse"
	errTypeUnauthorized = "err:policy/Unauthorized"
	errTypeInternal     = "err:system/InternalError"
)

// flureeError is Fluree's error body.
type flureeError struct {
	Error  string `json:"error"`
	Status int    `json:"status"`
	Type   string `json:"@type"`
}

func writeFlureeError(w http.ResponseWriter, status int, msg string) {
	t := errTypeInternal
	switch status {
	case http.StatusBadRequest:
		t, msg = errTypeBadRequest, "Bad request: "+msg
	case http.StatusUnprocessableEntity, http.StatusUnsupportedMediaType:
		t = errTypeJSONParse
	case http.StatusUnauthorized:
		t = errTypeUnauthorized
	case http.StatusNotFound:
		t = errTypeNotFound
	}
	writeJSON(w, status, flureeError{Error: msg, Status: status, Type: t})
}

// ledgerNotFound is the one answer for an unknown alias and one outside
// the caller's scope.
func ledgerNotFound(w http.ResponseWriter) {
	writeFlureeError(w, http.StatusNotFound, "Ledger not found")
}

func (s *Server) discovery(w http.ResponseWriter, _ *http.Request) {
	doc := map[string]any{"version": 1, "api_base_url": flureeBase}
	if !s.opts.NoAuth {
		doc["auth"] = map[string]string{"type": "token"}
	}
	writeJSON(w, http.StatusOK, orderedDiscovery(doc))
}

// orderedDiscovery keeps Fluree's key order: version, api_base_url, auth.
func orderedDiscovery(doc map[string]any) any {
	type withAuth struct {
		Version int               `json:"version"`
		APIBase string            `json:"api_base_url"`
		Auth    map[string]string `json:"auth,omitempty"`
	}
	a, _ := doc["auth"].(map[string]string)
	return withAuth{Version: 1, APIBase: flureeBase, Auth: a}
}

// fluree routes the requests under /v1/fluree. The alias of a route may
// travel percent-encoded as one segment (Fluree's own form, "%2F" for a '/'
// inside a name) or with its slashes as they are: the route's verb is its
// last segment, so either is unambiguous.
func (s *Server) fluree(w http.ResponseWriter, r *http.Request) {
	path, _ := flureeRest(r.URL.EscapedPath())
	method := func(m string) bool {
		if r.Method == m {
			return true
		}
		w.Header().Set("Allow", m)
		w.WriteHeader(http.StatusMethodNotAllowed)
		return false
	}
	switch {
	case path == "/nameservice/snapshot":
		if method(http.MethodGet) {
			s.flureeSnapshot(w, r)
		}
	case path == "/events":
		if method(http.MethodGet) {
			s.flureeEvents(w, r)
		}
	case strings.HasPrefix(path, "/storage/ns/"):
		if alias, ok := unescapeAlias(w, strings.TrimPrefix(path, "/storage/ns/")); ok && method(http.MethodGet) {
			s.flureeLookup(w, r, alias)
		}
	case strings.HasPrefix(path, "/nameservice/refs/"):
		rest := strings.TrimPrefix(path, "/nameservice/refs/")
		i := strings.LastIndexByte(rest, '/')
		if i <= 0 {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		verb := rest[i+1:]
		if verb != "commit" && verb != "index" && verb != "init" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		if alias, ok := unescapeAlias(w, rest[:i]); ok && method(http.MethodPost) {
			if verb == "init" {
				s.flureeInit(w, r, alias)
			} else {
				s.flureeCAS(w, r, alias, verb)
			}
		}
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

func unescapeAlias(w http.ResponseWriter, raw string) (string, bool) {
	a, err := url.PathUnescape(raw)
	if err != nil || a == "" {
		writeFlureeError(w, http.StatusBadRequest, "alias is not a percent-encoded ledger alias")
		return "", false
	}
	return a, true
}

// flureeID parses a Fluree alias, answering 400 for an invalid one and the
// not-found answer when the caller may not touch it.
func flureeID(w http.ResponseWriter, r *http.Request, alias string, write bool) (model.ID, bool) {
	id, err := model.ParseID(alias)
	if err != nil {
		writeFlureeError(w, http.StatusBadRequest, err.Error())
		return id, false
	}
	p := principalOf(r.Context())
	if (write && !p.CanWrite(id.String())) || !p.CanRead(id.String()) {
		ledgerNotFound(w)
		return id, false
	}
	return id, true
}

// flureeRef is Fluree's RefValue: {"id": CID or null, "t": integer}.
type flureeRef struct {
	ID *string `json:"id"`
	T  int64   `json:"t"`
}

// refOf returns v (a head or an index) as a RefValue; an address that is
// not a CID cannot travel on Fluree's wire.
func refOf(id model.ID, c model.Concern, v model.Value) (flureeRef, error) {
	if v.Unborn() {
		return flureeRef{T: v.V}, nil
	}
	addr := v.Payload.String("address")
	if err := checkCID(addr); err != nil {
		return flureeRef{}, notExpressible(id, c.String()+" address", err)
	}
	return flureeRef{ID: &addr, T: v.V}, nil
}

// errNotExpressible is a record Fluree's wire types cannot carry.
type errNotExpressible struct{ msg string }

func (e errNotExpressible) Error() string { return e.msg }

// notExpressible names the record and the field, not its value: an
// address may be a path on the server (a file nameservice's).
func notExpressible(id model.ID, what string, why error) error {
	return errNotExpressible{fmt.Sprintf("record %s cannot be expressed on Fluree's wire: its %s is not a content ID (%v); read it on /ns/v1/records",
		id, what, why)}
}

// valueOf returns the Value a RefValue stands for: unborn at t when id is
// null (a value no record holds unless t is 0).
func valueOf(ref flureeRef) model.Value {
	if ref.ID == nil {
		return model.Value{V: ref.T}
	}
	return model.RefValue(*ref.ID, ref.T)
}

// pushRefRequest is the body of a ref push; New is raw to tell a null from
// a missing value, as serde does.
type pushRefRequest struct {
	Expected *flureeRef      `json:"expected"`
	New      json.RawMessage `json:"new"`
}

// decodeFluree decodes a JSON body as axum's Json extractor would: 415
// without a JSON content type, 400 for a syntax error, 422 for a body of the
// wrong shape. Unknown fields are ignored, as serde does by default.
func decodeFluree(w http.ResponseWriter, r *http.Request, v any) bool {
	ct := r.Header.Get("Content-Type")
	if mt, _, _ := strings.Cut(ct, ";"); strings.TrimSpace(mt) != "application/json" && !strings.HasSuffix(strings.TrimSpace(mt), "+json") {
		writeFlureeError(w, http.StatusUnsupportedMediaType, "Expected request with `Content-Type: application/json`")
		return false
	}
	body, err := readBody(r)
	if err != nil {
		var tl errTooLarge
		if errors.As(err, &tl) {
			writeFlureeError(w, http.StatusRequestEntityTooLarge, err.Error())
			return false
		}
		writeFlureeError(w, http.StatusBadRequest, err.Error())
		return false
	}
	if err := json.Unmarshal(body, v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) || !json.Valid(body) {
			writeFlureeError(w, http.StatusBadRequest, "Failed to parse the request body as JSON: "+err.Error())
			return false
		}
		writeFlureeError(w, http.StatusUnprocessableEntity, "Failed to deserialize the JSON body into the target type: "+err.Error())
		return false
	}
	return true
}

func (s *Server) flureeCAS(w http.ResponseWriter, r *http.Request, alias, verb string) {
	id, ok := flureeID(w, r, alias, true)
	if !ok {
		return
	}
	var req pushRefRequest
	if !decodeFluree(w, r, &req) {
		return
	}
	if len(req.New) == 0 || string(req.New) == "null" {
		writeFlureeError(w, http.StatusUnprocessableEntity, "Failed to deserialize the JSON body into the target type: missing field `new`")
		return
	}
	var next flureeRef
	if err := json.Unmarshal(req.New, &next); err != nil {
		writeFlureeError(w, http.StatusUnprocessableEntity, "Failed to deserialize the JSON body into the target type: new: "+err.Error())
		return
	}
	for _, ref := range []*flureeRef{req.Expected, &next} {
		if ref != nil && ref.ID != nil {
			if err := checkCID(*ref.ID); err != nil {
				writeFlureeError(w, http.StatusUnprocessableEntity, "Failed to deserialize the JSON body into the target type: invalid CID string: "+err.Error())
				return
			}
		}
	}
	if next.ID == nil || next.T < 1 {
		writeFlureeError(w, http.StatusBadRequest, "new must name a content ID at t >= 1")
		return
	}
	c := model.Head
	if verb == "index" {
		c = model.Index
	}
	var expected *model.Value
	if req.Expected != nil {
		v := valueOf(*req.Expected)
		expected = &v
	}
	ctx, cancel := s.opContext(r)
	defer cancel()
	out, err := s.ns.CompareAndSetRef(ctx, id.String(), c, expected, nameservice.Ref{Address: *next.ID, T: next.T})
	err = s.public(ctx, "compare-and-set "+verb+" "+id.String(), err)
	switch {
	case errors.Is(err, model.ErrNotFound) || errors.Is(err, model.ErrWrongKind):
		s.metrics.conflicts.WithLabelValues(c.String()).Inc()
		writeJSON(w, http.StatusConflict, casAnswer{Status: "conflict"})
		return
	case errors.Is(err, model.ErrInvalidArgument):
		writeFlureeError(w, http.StatusBadRequest, err.Error())
		return
	case err != nil:
		if errors.Is(err, model.ErrUnavailable) {
			s.metrics.unknown.Inc()
		}
		writeFlureeError(w, http.StatusInternalServerError, "CAS operation failed: "+err.Error())
		return
	case out.Applied:
		writeJSON(w, http.StatusOK, casAnswer{Status: "updated", Ref: &next})
		return
	}
	s.metrics.conflicts.WithLabelValues(c.String()).Inc()
	actual, err := refOf(id, c, out.Current)
	if err != nil {
		writeFlureeError(w, http.StatusBadRequest, err.Error())
		return
	}
	writeJSON(w, http.StatusConflict, casAnswer{Status: "conflict", Actual: &actual})
}

// casAnswer is Fluree's PushRefResponse.
type casAnswer struct {
	Status string     `json:"status"`
	Ref    *flureeRef `json:"ref,omitempty"`
	Actual *flureeRef `json:"actual,omitempty"`
}

func (s *Server) flureeInit(w http.ResponseWriter, r *http.Request, alias string) {
	id, ok := flureeID(w, r, alias, true)
	if !ok {
		return
	}
	ctx, cancel := s.opContext(r)
	defer cancel()
	err := s.public(ctx, "init "+id.String(), s.ns.Init(ctx, id.String()))
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, map[string]bool{"created": true})
	case errors.Is(err, model.ErrAlreadyExists):
		writeJSON(w, http.StatusOK, map[string]bool{"created": false})
	default:
		writeFlureeError(w, http.StatusInternalServerError, "Init failed: "+err.Error())
	}
}

func (s *Server) flureeLookup(w http.ResponseWriter, r *http.Request, alias string) {
	id, ok := flureeID(w, r, alias, false)
	if !ok {
		return
	}
	rec, err := s.ns.Get(r.Context(), id)
	switch {
	case errors.Is(err, model.ErrNotFound):
		ledgerNotFound(w)
		return
	case err != nil:
		writeFlureeError(w, http.StatusInternalServerError, "Nameservice lookup failed: "+s.public(r.Context(), "get "+id.String(), err).Error())
		return
	case rec.Kind != model.Ledger:
		ledgerNotFound(w)
		return
	}
	ns, err := nsRecordOf(rec)
	if err != nil {
		writeFlureeError(w, http.StatusBadRequest, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, nsRecordResponse(ns))
}

// flureeSnapshot serves GET /v1/fluree/nameservice/snapshot: every record
// the caller may see, ledgers then graph sources, written as they are read
// (one backend page at a time). A record that cannot be read, or that
// Fluree's wire cannot carry (an address that is not a CID), is left out,
// logged by its ID and counted, and the others are served.
func (s *Server) flureeSnapshot(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p := principalOf(ctx)
	sn := &snapshotWriter{s: s, ctx: ctx, out: newStreamedJSON(w), failed: map[model.ID]bool{},
		gsVisible: p.ListsGraphSources()}
	fail := func(err error) {
		sn.out.fail(func() {
			writeFlureeError(w, http.StatusInternalServerError, "Failed to list ledgers: "+s.public(ctx, "list", err).Error())
		}, s.log)
	}
	// One pass writes the ledgers and keeps the graph sources (usually
	// few) for after them; past maxSpool bytes of those, a second pass
	// lists them alone.
	sn.out.str(`{"ledgers":[`)
	if err := sn.pass(p, ""); err != nil {
		fail(err)
		return
	}
	sn.out.str(`],"graph_sources":[`)
	sn.n = 0
	if sn.spill {
		if err := sn.pass(p, model.GraphSource); err != nil {
			fail(err)
			return
		}
	}
	for _, b := range sn.spool {
		sn.entry(b)
	}
	sn.out.str("]}")
	sn.out.finish()
}

// maxSpool bounds the graph sources a snapshot keeps while it writes the
// ledgers.
const maxSpool = 1 << 20

// snapshotWriter writes the entries of one snapshot.
type snapshotWriter struct {
	s         *Server
	ctx       context.Context
	out       *streamedJSON
	gsVisible bool
	failed    map[model.ID]bool // counted once, though listed in both passes
	n         int               // entries written in the current array
	spool     [][]byte          // graph sources for after the ledgers
	spoolSize int
	spill     bool // the graph sources did not fit the spool
}

// pass lists the records of kind ("" for all): it writes the ledgers when
// kind is "", else the graph sources, and spools the graph sources of an
// unfiltered pass.
func (sn *snapshotWriter) pass(p *auth.Principal, kind model.Kind) error {
	for rec, err := range sn.s.scan(sn.ctx, p, listQuery{kind: kind, includeRetracted: true}) {
		var re *model.RecordError
		switch {
		case errors.As(err, &re):
			if !sn.failed[re.ID] || re.ID.IsZero() {
				sn.failed[re.ID] = true
				sn.s.skip(sn.ctx, "snapshot", re.ID, re.Err)
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
			sn.s.skip(sn.ctx, "snapshot", rec.ID, err)
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
		sn.out.str(",")
	}
	sn.out.write(b)
	sn.n++
}

// snapshotEntry is rec as the snapshot lists it: NsRecord or
// GraphSourceRecord.
func snapshotEntry(rec *model.Record) ([]byte, error) {
	if rec.Kind == model.Ledger {
		ns, err := nsRecordOf(rec)
		return marshal(ns), err
	}
	gs, err := graphSourceOf(rec)
	return marshal(gs), err
}

// Reasons a record is left out of Fluree's answers.
const (
	skipUnreadable     = "unreadable"
	skipNotExpressible = "not_expressible"
)

// skip logs and counts a record left out of a Fluree answer of route
// (snapshot, events): one that cannot be read or one Fluree's wire cannot
// carry (err says which). The log names the record by its ID only.
func (s *Server) skip(ctx context.Context, route string, id model.ID, err error) {
	reason := skipUnreadable
	var ne errNotExpressible
	if errors.As(err, &ne) {
		reason = skipNotExpressible
	}
	s.skipped.WithLabelValues(route, reason).Inc()
	name := id.String()
	if id.IsZero() {
		name = "(an object with no ID)"
	}
	s.log.LogAttrs(ctx, slog.LevelWarn, "record left out of a Fluree answer", slog.String("route", route),
		slog.String("id", name), slog.String("reason", reason), slog.String("code", model.Code(err).String()))
}

// newSkipCounter registers the count of records left out of Fluree's
// answers, by route and reason.
func newSkipCounter(reg prometheus.Registerer) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "nameservice_fluree_records_skipped_total",
		Help: "Records left out of Fluree's snapshot and event streams: unreadable, or not expressible on Fluree's wire.",
	}, []string{"route", "reason"})
	reg.MustRegister(c)
	for _, route := range []string{"snapshot", "events"} {
		for _, reason := range []string{skipUnreadable, skipNotExpressible} {
			c.WithLabelValues(route, reason)
		}
	}
	return c
}
