package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/guard"
	"nameservice.dev/nameservice/internal/nswire"
	"nameservice.dev/nameservice/model"
	"nameservice.dev/nameservice/server/auth"
)

// maxPageSize bounds one page of GET /ns/v1/records.
const maxPageSize = 1000

// notFoundBody is the one answer for a record that does not exist and for
// one outside the caller's scope, so that the two cannot be told apart.
func notFoundBody(id model.ID) []byte {
	return marshal(nswire.Error{Error: fmt.Sprintf("%v: %s", model.ErrNotFound, id), Code: model.NotFound.String()})
}

// pathID parses the {id...} of the route, answering 400 when it is not a
// valid ID.
func pathID(w http.ResponseWriter, r *http.Request) (model.ID, bool) {
	id, err := model.ParseID(r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return id, false
	}
	return id, true
}

// canRead answers 404 and returns false when the caller may not read id.
func canRead(w http.ResponseWriter, r *http.Request, id model.ID) bool {
	if principalOf(r.Context()).CanRead(id.String()) {
		return true
	}
	writeRaw(w, http.StatusNotFound, notFoundBody(id))
	return false
}

// canWrite answers 404 (403 when the caller may read id) and returns false
// when the caller may not write id.
func canWrite(w http.ResponseWriter, r *http.Request, id model.ID) bool {
	p := principalOf(r.Context())
	if p.CanWrite(id.String()) {
		return true
	}
	if p.CanRead(id.String()) {
		writeRaw(w, http.StatusForbidden, marshal(nswire.Error{Error: "no write access to " + id.String(), Code: "PermissionDenied"}))
		return false
	}
	writeRaw(w, http.StatusNotFound, notFoundBody(id))
	return false
}

// answer returns the status and body of a driver error on the /ns/v1
// routes; a NotFound gets the scope-neutral body.
func answer(id model.ID, err error) (int, []byte) {
	if errors.Is(err, model.ErrNotFound) {
		return http.StatusNotFound, notFoundBody(id)
	}
	return errorBody(err)
}

func writeAnswer(w http.ResponseWriter, id model.ID, err error) {
	status, b := answer(id, err)
	writeRaw(w, status, b)
}

func (s *Server) lookup(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok || !canRead(w, r, id) {
		return
	}
	rec, err := s.ns.Get(r.Context(), id)
	if err != nil {
		writeAnswer(w, id, s.public(r.Context(), "get "+id.String(), err))
		return
	}
	writeJSON(w, http.StatusOK, rec)
}

// heads serves GET /ns/v1/heads/{id}: the head and index of a ledger, read
// with the driver's own read of the two where it has one.
func (s *Server) heads(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok || !canRead(w, r, id) {
		return
	}
	h, err := s.ns.Heads(r.Context(), id.String())
	if err != nil {
		writeAnswer(w, id, s.public(r.Context(), "get heads "+id.String(), err))
		return
	}
	writeJSON(w, http.StatusOK, nswire.HeadsResponse{Head: h.Head, Index: h.Index})
}

// list serves GET /ns/v1/records: one page of the records the caller may
// read (see sources), with a sealed token for the next (see PageTokenKey).
func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	q, size, err := parseListQuery(r)
	if err != nil {
		writeError(w, err)
		return
	}
	p := principalOf(r.Context())
	bound := binding(p, q)
	pos, err := s.opts.PageTokenKey.open(r.URL.Query().Get("page_token"), bound)
	if err != nil {
		writeError(w, err)
		return
	}
	page, next, err := s.listPage(r.Context(), p, q, pos, size)
	if err != nil {
		writeError(w, s.public(r.Context(), "list", err))
		return
	}
	resp := nswire.ListResponse{Records: page.records}
	if resp.Records == nil {
		resp.Records = []*model.Record{}
	}
	for _, f := range page.failed {
		resp.Failed = append(resp.Failed, s.publicFailure(r.Context(), f))
	}
	if next != nil {
		resp.NextPageToken = s.opts.PageTokenKey.seal(*next, bound)
	}
	writeJSON(w, http.StatusOK, resp)
}

// parseListQuery returns the query of GET /ns/v1/records and its page size.
func parseListQuery(r *http.Request) (listQuery, int, error) {
	v := r.URL.Query()
	q := listQuery{kind: model.Kind(v.Get("kind")), prefix: v.Get("prefix"), state: v.Get("state"), sourceType: v.Get("source_type")}
	if err := guard.CheckList(q.options(q.prefix)); err != nil {
		return q, 0, err
	}
	var err error
	if s := v.Get("include_retracted"); s != "" {
		if q.includeRetracted, err = strconv.ParseBool(s); err != nil {
			return q, 0, fmt.Errorf("%w: include_retracted %q is not a boolean", model.ErrInvalidArgument, s)
		}
	}
	size := 0
	if s := v.Get("page_size"); s != "" {
		if size, err = strconv.Atoi(s); err != nil || size < 0 {
			return q, 0, fmt.Errorf("%w: page_size %q is not a count", model.ErrInvalidArgument, s)
		}
	}
	if size == 0 || size > maxPageSize {
		size = maxPageSize
	}
	return q, size, nil
}

// visibleFailure reports whether p may learn of a record that failed to
// read: one in its scope, or any when it reads everything.
func visibleFailure(p *auth.Principal, f *model.RecordError) bool {
	if f.ID.IsZero() {
		return p.ReadsAll()
	}
	return p.CanRead(f.ID.String())
}

func (s *Server) create(w http.ResponseWriter, r *http.Request) {
	id, body, ok := s.writeRequest(w, r)
	if !ok {
		return
	}
	var rec model.Record
	if err := rec.UnmarshalJSON(body); err != nil {
		writeError(w, err)
		return
	}
	if rec.ID != id {
		writeError(w, fmt.Errorf("%w: the record's id %s differs from the path's %s", model.ErrInvalidArgument, rec.ID, id))
		return
	}
	s.write(w, r, body, func(ctx context.Context) (int, []byte) {
		if err := s.ns.Create(ctx, &rec); err != nil {
			return answer(id, s.public(ctx, "create "+id.String(), err))
		}
		return http.StatusCreated, nil
	})
}

func (s *Server) purge(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok || !canWrite(w, r, id) {
		return
	}
	s.write(w, r, nil, func(ctx context.Context) (int, []byte) {
		return s.noContent(ctx, id, s.ns.Delete(ctx, id), "purge")
	})
}

func (s *Server) retract(w http.ResponseWriter, r *http.Request) {
	id, body, ok := s.writeRequest(w, r)
	if !ok {
		return
	}
	var req nswire.RetractRequest
	if len(body) > 0 {
		if err := decodeStrict(body, &req); err != nil {
			writeError(w, err)
			return
		}
	}
	at := time.Unix(req.At, 0)
	if req.At == 0 {
		at = s.opts.Now()
	}
	s.write(w, r, body, func(ctx context.Context) (int, []byte) {
		return s.noContent(ctx, id, s.ns.RetractAt(ctx, id, at), "retract")
	})
}

func (s *Server) push(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok || !canWrite(w, r, id) {
		return
	}
	c, err := model.ParseConcern(r.PathValue("concern"))
	if err != nil {
		writeError(w, err)
		return
	}
	body, err := readBody(r)
	if err != nil {
		s.bodyError(w, err)
		return
	}
	var req nswire.PushRequest
	if err := decodeStrict(body, &req); err != nil {
		writeError(w, err)
		return
	}
	cond, err := req.DriverCondition()
	if err != nil {
		writeError(w, fmt.Errorf("push %s %s: %w", c, id, err))
		return
	}
	s.write(w, r, body, func(ctx context.Context) (int, []byte) {
		out, err := s.ns.Update(ctx, id, c, cond, req.New)
		switch {
		case err != nil:
			return answer(id, s.public(ctx, "push "+c.String()+" "+id.String(), err))
		case out.Applied:
			return http.StatusOK, marshal(nswire.PushResponse{Applied: true, Current: out.Current})
		}
		s.metrics.conflicts.WithLabelValues(c.String()).Inc()
		return http.StatusConflict, marshal(nswire.PushResponse{Current: out.Current})
	})
}

func (s *Server) publishGraphSource(w http.ResponseWriter, r *http.Request) {
	id, body, ok := s.writeRequest(w, r)
	if !ok {
		return
	}
	var req nswire.GraphSourceRequest
	if err := decodeStrict(body, &req); err != nil {
		writeError(w, err)
		return
	}
	ctx, cancel := s.opContext(r)
	defer cancel()
	if err := s.ns.PublishGraphSource(ctx, id.String(), req.SourceType, req.Dependencies, req.Config); err != nil {
		writeAnswer(w, id, s.public(ctx, "publish graph source "+id.String(), err))
		return
	}
	rec, err := s.ns.Get(ctx, id)
	if err != nil {
		writeAnswer(w, id, s.public(ctx, "get "+id.String(), err))
		return
	}
	writeJSON(w, http.StatusOK, rec)
}

func (s *Server) bodyError(w http.ResponseWriter, err error) {
	var tl errTooLarge
	if errors.As(err, &tl) {
		writeRaw(w, http.StatusRequestEntityTooLarge, marshal(nswire.Error{Error: err.Error(), Code: model.InvalidArgument.String()}))
		return
	}
	writeError(w, err)
}

// write runs a write under the request's idempotency key: the first request
// with a key runs it and keeps its answer; a resend with the same key gets
// that answer (waiting while it runs). The write runs under a driver.Write
// whose ID is derived from the key and the caller, so that the backend
// records it and any server, this one after a restart included, recognises
// the write; a resend this server has no answer for (Ns-Attempt above 1)
// runs as a driver resend, which the backend resolves before it writes.
// Answers of 5xx are not kept: a resend asks again.
func (s *Server) write(w http.ResponseWriter, r *http.Request, body []byte, run func(ctx context.Context) (int, []byte)) {
	key := r.Header.Get(nswire.HeaderIdempotencyKey)
	ctx, cancel := s.opContext(r)
	defer cancel()
	if key == "" {
		status, b := run(ctx)
		writeRaw(w, status, b)
		return
	}
	if len(key) > MaxIdempotencyKey {
		writeError(w, fmt.Errorf("%w: %s longer than %d bytes", model.ErrInvalidArgument, nswire.HeaderIdempotencyKey, MaxIdempotencyKey))
		return
	}
	scoped := principalKey(r.Context()) + "\x00" + r.Method + " " + r.URL.EscapedPath() + "\x00" + key
	e, owner, same := s.idem.begin(scoped, body)
	switch {
	case !same:
		writeError(w, fmt.Errorf("%w: idempotency key reused for a different request", model.ErrInvalidArgument))
		return
	case !owner:
		if !e.wait(r.Context()) {
			return
		}
		s.metrics.replays.Inc()
		w.Header().Set(nswire.HeaderReplayed, "true")
		writeRaw(w, e.status, e.body)
		return
	}
	attempt, _ := strconv.Atoi(r.Header.Get(nswire.HeaderAttempt))
	ctx = driver.WithWrite(ctx, driver.Write{ID: writeID(scoped), Resend: attempt > 1})
	status, b := run(ctx)
	s.idem.finish(e, status, b)
	if status >= 500 {
		s.idem.forget(scoped, e)
	}
	writeRaw(w, status, b)
}

// writeID returns the write ID of a request's scoped idempotency key: a
// digest, so that it is the same on every server and names no caller.
func writeID(scoped string) string {
	sum := sha256.Sum256([]byte(scoped))
	return "k" + hex.EncodeToString(sum[:16])
}

// noContent answers a write whose success has no body: 204, or the error.
func (s *Server) noContent(ctx context.Context, id model.ID, err error, op string) (int, []byte) {
	if err != nil {
		return answer(id, s.public(ctx, op+" "+id.String(), err))
	}
	return http.StatusNoContent, nil
}

// writeRequest reads the ID of a write and its body, answering the request
// itself (and returning false) when the ID is malformed, out of the
// caller's write scope, or the body cannot be read.
func (s *Server) writeRequest(w http.ResponseWriter, r *http.Request) (model.ID, []byte, bool) {
	id, ok := pathID(w, r)
	if !ok || !canWrite(w, r, id) {
		return id, nil, false
	}
	body, err := readBody(r)
	if err != nil {
		s.bodyError(w, err)
		return id, nil, false
	}
	return id, body, true
}
