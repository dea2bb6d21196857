package server

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/internal/nswire"
	"nameservice.dev/nameservice/model"
	"nameservice.dev/nameservice/server/auth"
	"nameservice.dev/nameservice/server/internal/web"
)

// createBranch serves POST /ns/v1/branches/{id}: write access to the new
// branch and read access to its source are needed; a source out of the
// caller's read scope answers as a missing one.
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
	if !auth.FromContext(r.Context()).CanRead(src.String()) {
		web.WriteRaw(w, http.StatusNotFound, notFoundBody(src))
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

// dropBranch serves DELETE /ns/v1/branches/{id}: write access to the
// branch is needed.
func (s *Server) dropBranch(w http.ResponseWriter, r *http.Request) {
	id, _, ok := s.read(w, r, in{need: needWrite})
	if !ok {
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
			return answer(id, s.public.Error(ctx, "reset head "+id.String(), err))
		}
		s.log.LogAttrs(ctx, slog.LevelWarn, "head reset", slog.String("id", id.String()),
			slog.String("principal", auth.FromContext(r.Context()).Name),
			slog.String("head_was", prev.Head.String()), slog.String("index_was", prev.Index.String()),
			slog.Int64("head_t", commit.T), slog.String("head_address", commit.Address),
			slog.Bool("index_set", opts.Index != nil), slog.Bool("index_cleared", opts.ClearIndex))
		return http.StatusOK, web.Marshal(prev)
	})
}
