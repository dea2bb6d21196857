package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/internal/nswire"
	"nameservice.dev/nameservice/model"
)

// createBranch serves POST /ns/v1/branches/{id}: write access to the new
// branch and read access to its source are needed; a source out of the
// caller's read scope answers as a missing one.
func (s *Server) createBranch(w http.ResponseWriter, r *http.Request) {
	id, body, ok := s.writeRequest(w, r)
	if !ok {
		return
	}
	var req nswire.BranchRequest
	if err := decodeStrict(body, &req); err != nil {
		writeError(w, err)
		return
	}
	from := req.From
	if from == "" {
		from = model.DefaultBranch
	}
	src, err := model.ParseID(id.Name + ":" + from)
	if err != nil {
		writeError(w, fmt.Errorf("create branch %s: source branch: %w", id, err))
		return
	}
	if !principalOf(r.Context()).CanRead(src.String()) {
		writeRaw(w, http.StatusNotFound, notFoundBody(src))
		return
	}
	opts := nameservice.BranchOptions{From: from}
	if req.At != nil {
		opts.At = &nameservice.Ref{Address: req.At.Address, T: req.At.T}
	}
	s.write(w, r, body, func(ctx context.Context) (int, []byte) {
		rec, err := s.ns.CreateBranch(ctx, id.String(), opts)
		if err != nil {
			// A NotFound here is the source's, which the caller may read.
			return errorBody(s.public(ctx, "create branch "+id.String(), err))
		}
		return http.StatusCreated, marshal(rec)
	})
}

// dropBranch serves DELETE /ns/v1/branches/{id}: write access to the
// branch is needed.
func (s *Server) dropBranch(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok || !canWrite(w, r, id) {
		return
	}
	s.write(w, r, nil, func(ctx context.Context) (int, []byte) {
		return s.noContent(ctx, id, s.ns.DropBranch(ctx, id.String()), "drop branch")
	})
}

// resetHead serves POST /ns/v1/reset-head/{id}, the one route that moves a
// head back: it needs the admin scope on id, and every reset is logged with
// who asked and what it replaced.
func (s *Server) resetHead(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok || !canAdmin(w, r, id) {
		return
	}
	body, err := readBody(r)
	if err != nil {
		s.bodyError(w, err)
		return
	}
	var req nswire.ResetHeadRequest
	if err := decodeStrict(body, &req); err != nil {
		writeError(w, err)
		return
	}
	opts := nameservice.ResetOptions{ClearIndex: req.ClearIndex}
	if req.Index != nil {
		opts.Index = &nameservice.Ref{Address: req.Index.Address, T: req.Index.T}
	}
	commit := nameservice.Ref{Address: req.Commit.Address, T: req.Commit.T}
	s.write(w, r, body, func(ctx context.Context) (int, []byte) {
		prev, err := s.ns.ResetHead(ctx, id.String(), commit, opts)
		if err != nil {
			return answer(id, s.public(ctx, "reset head "+id.String(), err))
		}
		s.log.LogAttrs(ctx, slog.LevelWarn, "head reset", slog.String("id", id.String()),
			slog.String("principal", principalName(r.Context())),
			slog.String("head_was", prev.Head.String()), slog.String("index_was", prev.Index.String()),
			slog.Int64("head_t", commit.T), slog.String("head_address", commit.Address),
			slog.Bool("index_set", opts.Index != nil), slog.Bool("index_cleared", opts.ClearIndex))
		return http.StatusOK, marshal(prev)
	})
}

// canAdmin answers 403 (404 when the caller may not even read id) and
// returns false unless the caller has the admin scope on id.
func canAdmin(w http.ResponseWriter, r *http.Request, id model.ID) bool {
	p := principalOf(r.Context())
	if p.CanAdmin(id.String()) {
		return true
	}
	if p.CanRead(id.String()) {
		writeRaw(w, http.StatusForbidden, marshal(nswire.Error{Error: "reset-head needs the admin scope on " + id.String(), Code: "PermissionDenied"}))
		return false
	}
	writeRaw(w, http.StatusNotFound, notFoundBody(id))
	return false
}
