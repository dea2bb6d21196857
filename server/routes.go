package server

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/nswire"
	"nameservice.dev/nameservice/model"
	"nameservice.dev/nameservice/server/auth"
	"nameservice.dev/nameservice/server/internal/web"
)

// maxPageSize bounds one page of GET /ns/v1/records.
const maxPageSize = 1000

// notFoundBody is the one answer for a record that does not exist and for
// one outside the caller's scope, so that the two cannot be told apart.
func notFoundBody(id model.ID) []byte {
	return web.Marshal(nswire.Error{Error: fmt.Sprintf("%v: %s", model.ErrNotFound, id), Code: model.NotFound.String()})
}

// answer returns the status and body of a driver error met in op on id, as
// a client may be told it (web.Public); a NotFound gets the scope-neutral
// body. A nil err is a write whose success has no body: 204.
func (s *Server) answer(ctx context.Context, op string, id model.ID, err error) (int, []byte) {
	if err == nil {
		return http.StatusNoContent, nil
	}
	if err = s.public.Error(ctx, op+" "+id.String(), err); errors.Is(err, model.ErrNotFound) {
		return http.StatusNotFound, notFoundBody(id)
	}
	return errorBody(err)
}

// reply answers 200 with v, or the error err met in op on id.
func (s *Server) reply(w http.ResponseWriter, r *http.Request, op string, id model.ID, v any, err error) {
	if err != nil {
		status, b := s.answer(r.Context(), op, id, err)
		web.WriteRaw(w, status, b)
		return
	}
	web.WriteJSON(w, http.StatusOK, v)
}

func (s *Server) lookup(w http.ResponseWriter, r *http.Request) {
	if id, _, ok := s.read(w, r, in{need: needRead}); ok {
		rec, err := s.ns.Get(r.Context(), id)
		s.reply(w, r, "get", id, rec, err)
	}
}

// heads serves GET /ns/v1/heads/{id}: the head and index of a ledger, read
// with the driver's own read of the two where it has one.
func (s *Server) heads(w http.ResponseWriter, r *http.Request) {
	if id, _, ok := s.read(w, r, in{need: needRead}); ok {
		h, err := s.ns.Heads(r.Context(), id.String())
		s.reply(w, r, "get heads", id, nswire.HeadsResponse{Head: h.Head, Index: h.Index}, err)
	}
}

// list serves GET /ns/v1/records: one page of the records the caller may
// read (see sources), with a sealed token for the next (see PageTokenKey).
func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	q, size, err := parseListQuery(r)
	if err != nil {
		writeError(w, err)
		return
	}
	page, err := s.lister.Page(r.Context(), auth.FromContext(r.Context()), q, r.URL.Query().Get("page_token"), size)
	if err != nil {
		writeError(w, s.public.Error(r.Context(), "list", err))
		return
	}
	// Never null: an empty page lists no records.
	resp := nswire.ListResponse{Records: append([]*model.Record{}, page.Records...), NextPageToken: page.Next}
	for _, f := range page.Failed {
		resp.Failed = append(resp.Failed, s.public.Failure(r.Context(), f))
	}
	web.WriteJSON(w, http.StatusOK, resp)
}

// parseListQuery returns the query of GET /ns/v1/records and its page size.
func parseListQuery(r *http.Request) (nameservice.ListOptions, int, error) {
	v := r.URL.Query()
	q := nameservice.ListOptions{Kind: model.Kind(v.Get("kind")), Prefix: v.Get("prefix"), State: v.Get("state"), SourceType: v.Get("source_type")}
	var err error
	if s := v.Get("include_retracted"); s != "" {
		if q.IncludeRetracted, err = strconv.ParseBool(s); err != nil {
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
	var rec model.Record
	id, raw, ok := s.read(w, r, in{need: needWrite, body: &rec})
	if !ok {
		return
	}
	if rec.ID != id {
		writeError(w, fmt.Errorf("%w: the record's id %s differs from the path's %s", model.ErrInvalidArgument, rec.ID, id))
		return
	}
	if rec.SourceBranch != "" {
		// Its drop uncounts it from its source: naming one is a write to it.
		src, err := model.ParseID(id.Name + ":" + rec.SourceBranch)
		if err != nil {
			writeError(w, fmt.Errorf("create %s: source branch: %w", id, err))
			return
		}
		if !allowed(w, auth.FromContext(r.Context()), src, needWrite) {
			return
		}
	}
	s.write(w, r, raw, func(ctx context.Context) (int, []byte) {
		if err := s.ns.Create(ctx, &rec); err != nil {
			return s.answer(ctx, "create", id, err)
		}
		return http.StatusCreated, nil
	})
}

func (s *Server) purge(w http.ResponseWriter, r *http.Request) {
	if id, _, ok := s.read(w, r, in{need: needWrite}); ok {
		s.write(w, r, nil, func(ctx context.Context) (int, []byte) {
			return s.answer(ctx, "purge", id, s.ns.Delete(ctx, id))
		})
	}
}

func (s *Server) retract(w http.ResponseWriter, r *http.Request) {
	var body nswire.RetractRequest
	if id, raw, ok := s.read(w, r, in{need: needWrite, body: &body, optional: true}); ok {
		at := time.Unix(body.At, 0)
		if body.At == 0 {
			at = s.opts.Now()
		}
		s.write(w, r, raw, func(ctx context.Context) (int, []byte) {
			return s.answer(ctx, "retract", id, s.ns.RetractAt(ctx, id, at))
		})
	}
}

func (s *Server) push(w http.ResponseWriter, r *http.Request) {
	var body nswire.PushRequest
	id, raw, ok := s.read(w, r, in{need: needWrite, body: &body})
	if !ok {
		return
	}
	c, err := model.ParseConcern(r.PathValue("concern"))
	if err != nil {
		writeError(w, err)
		return
	}
	cond, err := body.DriverCondition()
	if err != nil {
		writeError(w, fmt.Errorf("push %s %s: %w", c, id, err))
		return
	}
	s.write(w, r, raw, func(ctx context.Context) (int, []byte) {
		out, err := s.ns.Update(ctx, id, c, cond, body.New)
		switch {
		case err != nil:
			return s.answer(ctx, "push "+c.String(), id, err)
		case out.Applied:
			return http.StatusOK, web.Marshal(nswire.PushResponse{Applied: true, Current: out.Current})
		}
		s.metrics.conflicts.WithLabelValues(c.String()).Inc()
		return http.StatusConflict, web.Marshal(nswire.PushResponse{Current: out.Current})
	})
}

func (s *Server) publishGraphSource(w http.ResponseWriter, r *http.Request) {
	var body nswire.GraphSourceRequest
	id, _, ok := s.read(w, r, in{need: needWrite, body: &body})
	if !ok {
		return
	}
	ctx, cancel := web.OpContext(r, s.opts.OpTimeout)
	defer cancel()
	if err := s.ns.PublishGraphSource(ctx, id.String(), body.SourceType, body.Dependencies, body.Config); err != nil {
		s.reply(w, r, "publish graph source", id, nil, err)
		return
	}
	rec, err := s.ns.Get(ctx, id)
	s.reply(w, r, "get", id, rec, err)
}

// write runs a write under the request's idempotency key: the first request
// with a key runs it and keeps its answer (see finish); a resend gets that
// answer, waiting while it runs. The write's driver.Write ID derives from
// the key and the caller, so that the backend records it and any server
// recognises it; a resend this server has no answer for (Ns-Attempt above
// 1) runs as a driver resend, which the backend resolves before it writes.
func (s *Server) write(w http.ResponseWriter, r *http.Request, body []byte, run func(ctx context.Context) (int, []byte)) {
	key := r.Header.Get(nswire.HeaderIdempotencyKey)
	ctx, cancel := web.OpContext(r, s.opts.OpTimeout)
	defer cancel()
	if key == "" {
		status, b := run(ctx)
		web.WriteRaw(w, status, b)
		return
	}
	if len(key) > MaxIdempotencyKey {
		writeError(w, fmt.Errorf("%w: %s longer than %d bytes", model.ErrInvalidArgument, nswire.HeaderIdempotencyKey, MaxIdempotencyKey))
		return
	}
	scoped := auth.FromContext(r.Context()).Key() + "\x00" + r.Method + " " + r.URL.EscapedPath() + "\x00" + key
	e, owner, same := s.idem.begin(scoped, body)
	switch {
	case !same:
		writeError(w, fmt.Errorf("%w: idempotency key reused for a different request", model.ErrInvalidArgument))
		return
	case !owner:
		select {
		case <-e.done:
		case <-r.Context().Done():
			return
		}
		s.metrics.replays.Inc()
		w.Header().Set(nswire.HeaderReplayed, "true")
		web.WriteRaw(w, e.status, e.body)
		return
	}
	attempt, _ := strconv.Atoi(r.Header.Get(nswire.HeaderAttempt))
	// The write ID is a digest, the same on every server and naming no caller.
	sum := sha256.Sum256([]byte(scoped))
	ctx = driver.WithWrite(ctx, driver.Write{ID: "k" + hex.EncodeToString(sum[:16]), Resend: attempt > 1})
	status, b := run(ctx)
	s.idem.finish(e, status, b)
	web.WriteRaw(w, status, b)
}

// createBranch serves POST /ns/v1/branches/{id}: it needs write access to
// the branch and read access to its source (else answered as missing).
func (s *Server) createBranch(w http.ResponseWriter, r *http.Request) {
	var body nswire.BranchRequest
	id, raw, ok := s.read(w, r, in{need: needWrite, body: &body})
	if !ok {
		return
	}
	from := cmp.Or(body.From, model.DefaultBranch)
	src, err := model.ParseID(id.Name + ":" + from)
	if err != nil {
		writeError(w, fmt.Errorf("create branch %s: source branch: %w", id, err))
		return
	}
	if !allowed(w, auth.FromContext(r.Context()), src, needRead) {
		return
	}
	opts := nameservice.BranchOptions{From: from}
	if body.At != nil {
		opts.At = &nameservice.Ref{Address: body.At.Address, T: body.At.T}
	}
	s.write(w, r, raw, func(ctx context.Context) (int, []byte) {
		rec, err := s.ns.CreateBranch(ctx, id.String(), opts)
		if err != nil {
			// A NotFound here is the source's, which the caller may read.
			return errorBody(s.public.Error(ctx, "create branch "+id.String(), err))
		}
		return http.StatusCreated, web.Marshal(rec)
	})
}

func (s *Server) dropBranch(w http.ResponseWriter, r *http.Request) {
	if id, _, ok := s.read(w, r, in{need: needWrite}); ok {
		s.write(w, r, nil, func(ctx context.Context) (int, []byte) {
			return s.answer(ctx, "drop branch", id, s.ns.DropBranch(ctx, id.String()))
		})
	}
}

// resetHead serves POST /ns/v1/reset-head/{id}, the one route that moves a
// head back: it needs the admin scope, and is logged with who asked and
// what it replaced.
func (s *Server) resetHead(w http.ResponseWriter, r *http.Request) {
	var body nswire.ResetHeadRequest
	id, raw, ok := s.read(w, r, in{need: needAdmin, body: &body})
	if !ok {
		return
	}
	opts := nameservice.ResetOptions{ClearIndex: body.ClearIndex}
	if body.Index != nil {
		opts.Index = &nameservice.Ref{Address: body.Index.Address, T: body.Index.T}
	}
	commit := nameservice.Ref{Address: body.Commit.Address, T: body.Commit.T}
	s.write(w, r, raw, func(ctx context.Context) (int, []byte) {
		prev, err := s.ns.ResetHead(ctx, id.String(), commit, opts)
		if err != nil {
			return s.answer(ctx, "reset head", id, err)
		}
		s.log.LogAttrs(ctx, slog.LevelWarn, "head reset", slog.String("id", id.String()),
			slog.String("principal", auth.FromContext(r.Context()).Name),
			slog.String("head_was", prev.Head.String()), slog.String("index_was", prev.Index.String()),
			slog.Int64("head_t", commit.T), slog.String("head_address", commit.Address),
			slog.Bool("index_set", opts.Index != nil), slog.Bool("index_cleared", opts.ClearIndex))
		return http.StatusOK, web.Marshal(prev)
	})
}

// collect serves POST /ns/v1/collect, for a caller that may write every ID
// under the prefix: one JSON line per object (by record ID, never the
// backend's object names), then the totals. Collection is safe to repeat,
// so it needs no idempotency key; it runs until done or the client leaves.
func (s *Server) collect(w http.ResponseWriter, r *http.Request) {
	var req nswire.CollectRequest
	if _, _, ok := s.read(w, r, in{body: &req}); !ok {
		return
	}
	if !auth.FromContext(r.Context()).CanWriteUnder(req.Prefix) {
		web.WriteJSON(w, http.StatusForbidden, nswire.Error{Error: fmt.Sprintf("collect: no write access to every ID under %q", req.Prefix),
			Code: model.PermissionDenied.String()})
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	enc := json.NewEncoder(w)
	flush := http.NewResponseController(w)
	st, err := s.ns.Collect(r.Context(), nameservice.CollectOptions{
		Prefix: req.Prefix, OlderThan: time.Duration(req.OlderThanMS) * time.Millisecond, DryRun: req.DryRun,
		Report: func(o driver.Collected) {
			_ = enc.Encode(nswire.CollectLine{ID: o.ID, Removed: o.Removed, Reason: o.Reason})
			_ = flush.Flush()
		},
	})
	if err != nil {
		_, b := errorBody(s.public.Error(r.Context(), "collect", err))
		var e nswire.Error
		_ = json.Unmarshal(b, &e)
		_ = enc.Encode(nswire.CollectLine{Error: &e})
		return
	}
	_ = enc.Encode(nswire.CollectLine{Stats: &st})
}
