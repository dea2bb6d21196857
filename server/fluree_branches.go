package server

import (
	"errors"
	"fmt"
	"net/http"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/model"
)

// Fluree's server creates, lists and drops branches on its data routes
// (POST /fluree/branch, GET /fluree/branch/{ledger}, POST
// /fluree/drop-branch); these are their equivalents, with Fluree's bodies,
// over the nameservice's own branch operations. Fluree's `at` names a
// commit by t or by content ID, which only its commit store can resolve:
// it is refused here (POST /ns/v1/branches takes an address and t).

// flureeBranchRoutes registers the routes under both Fluree prefixes. They
// match every method, so that another method gets 405 here rather than
// the 404 of the catch-all Fluree route.
func (s *Server) flureeBranchRoutes(m *http.ServeMux) {
	for _, p := range []string{flureeBase, flureeBare} {
		m.HandleFunc(p+"/branch", s.auth(only(http.MethodPost, s.flureeCreateBranch)))
		m.HandleFunc(p+"/branch/{ledger...}", s.auth(only(http.MethodGet, s.flureeListBranches)))
		m.HandleFunc(p+"/drop-branch", s.auth(only(http.MethodPost, s.flureeDropBranch)))
	}
}

// only answers 405 to a request whose method is not method.
func only(method string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != method {
			w.Header().Set("Allow", method)
			writeFlureeTyped(w, http.StatusMethodNotAllowed, errTypeBadRequest, "method not allowed: use "+method)
			return
		}
		h(w, r)
	}
}

// flureeBranchRequest is the body of Fluree's create and drop routes.
type flureeBranchRequest struct {
	Ledger string  `json:"ledger"`
	Branch string  `json:"branch"`
	Source string  `json:"source,omitempty"` // create only; main by default
	At     *string `json:"at,omitempty"`     // create only; refused
}

// flureeBranchInfo is one entry of Fluree's branch listing.
type flureeBranchInfo struct {
	Branch   string `json:"branch"`
	LedgerID string `json:"ledger_id"`
	T        int64  `json:"t"`
	Source   string `json:"source,omitempty"`
}

func writeFlureeTyped(w http.ResponseWriter, status int, typ, msg string) {
	writeJSON(w, status, flureeError{Error: msg, Status: status, Type: typ})
}

// flureeAnswer writes err in Fluree's form: 404 for a missing record (one
// outside the caller's scope answers the same), 409 err:db/LedgerExists, a
// 409 with the type of Fluree's own refusal (a nameservice error) for a
// drop refused with branches, 400 for bad input.
func flureeAnswer(w http.ResponseWriter, err error) {
	switch model.Code(err) {
	case model.NotFound:
		ledgerNotFound(w)
	case model.AlreadyExists:
		writeFlureeTyped(w, http.StatusConflict, "err:db/LedgerExists", err.Error())
	case model.HasBranches:
		writeFlureeTyped(w, http.StatusConflict, "err:system/NameServiceError", err.Error())
	case model.InvalidArgument, model.WrongKind:
		writeFlureeError(w, http.StatusBadRequest, err.Error())
	default:
		writeFlureeError(w, http.StatusInternalServerError, err.Error())
	}
}

// flureeBranchBody reads the body of a create or drop and the branch's ID.
func flureeBranchBody(w http.ResponseWriter, r *http.Request) (flureeBranchRequest, model.ID, bool) {
	var req flureeBranchRequest
	body, err := readBody(r)
	if err == nil {
		err = decodeStrict(body, &req)
	}
	if err != nil {
		writeFlureeError(w, http.StatusBadRequest, err.Error())
		return req, model.ID{}, false
	}
	id, err := model.ParseID(req.Ledger + ":" + req.Branch)
	if err != nil || req.Ledger == "" || req.Branch == "" {
		writeFlureeError(w, http.StatusBadRequest, fmt.Sprintf("ledger and branch must name a branch: %v", err))
		return req, id, false
	}
	return req, id, true
}

// flureeCanWrite answers as Fluree does (404 out of scope) unless the
// caller may write id and read src.
func flureeCanWrite(w http.ResponseWriter, r *http.Request, id, src model.ID) bool {
	p := principalOf(r.Context())
	if p.CanWrite(id.String()) && p.CanRead(src.String()) {
		return true
	}
	if p.CanRead(id.String()) {
		writeFlureeTyped(w, http.StatusForbidden, "err:policy/AccessDenied", "no write access to "+id.String())
		return false
	}
	ledgerNotFound(w)
	return false
}

func (s *Server) flureeCreateBranch(w http.ResponseWriter, r *http.Request) {
	req, id, ok := flureeBranchBody(w, r)
	if !ok {
		return
	}
	if req.At != nil {
		writeFlureeError(w, http.StatusBadRequest, "at: this nameservice has no commit store to resolve a commit by t or content ID; POST /ns/v1/branches/{id} takes its address and t")
		return
	}
	src, err := model.ParseID(req.Ledger + ":" + req.Source)
	if req.Source == "" {
		src, err = model.ParseID(req.Ledger)
	}
	if err != nil {
		writeFlureeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if !flureeCanWrite(w, r, id, src) {
		return
	}
	ctx, cancel := s.opContext(r)
	defer cancel()
	rec, err := s.ns.CreateBranch(ctx, id.String(), nameservice.BranchOptions{From: src.Branch})
	if err != nil {
		flureeAnswer(w, s.public(ctx, "create branch "+id.String(), err))
		return
	}
	writeJSON(w, http.StatusCreated, struct {
		LedgerID string `json:"ledger_id"`
		Branch   string `json:"branch"`
		Source   string `json:"source"`
		T        int64  `json:"t"`
	}{rec.ID.String(), rec.ID.Branch, rec.SourceBranch, rec.Head.V})
}

// flureeListBranches lists the live branches of a ledger the caller may
// read; a ledger with none in scope is not found.
func (s *Server) flureeListBranches(w http.ResponseWriter, r *http.Request) {
	ledger := r.PathValue("ledger")
	p := principalOf(r.Context())
	out := []flureeBranchInfo{}
	for rec, err := range s.ns.ListBranches(r.Context(), ledger) {
		var bad *model.RecordError
		switch {
		case errors.As(err, &bad):
			continue // unreadable: Fluree's listing knows no such entry
		case errors.Is(err, model.ErrInvalidArgument), errors.Is(err, model.ErrInvalidID):
			writeFlureeError(w, http.StatusBadRequest, err.Error())
			return
		case err != nil:
			writeFlureeError(w, http.StatusInternalServerError, s.public(r.Context(), "list branches", err).Error())
			return
		}
		if !rec.Retracted && p.CanRead(rec.ID.String()) {
			out = append(out, flureeBranchInfo{Branch: rec.ID.Branch, LedgerID: rec.ID.String(), T: rec.Head.V, Source: rec.SourceBranch})
		}
	}
	if len(out) == 0 {
		ledgerNotFound(w)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) flureeDropBranch(w http.ResponseWriter, r *http.Request) {
	_, id, ok := flureeBranchBody(w, r)
	if !ok || !flureeCanWrite(w, r, id, id) {
		return
	}
	ctx, cancel := s.opContext(r)
	defer cancel()
	if err := s.ns.DropBranch(ctx, id.String()); err != nil {
		flureeAnswer(w, s.public(ctx, "drop branch "+id.String(), err))
		return
	}
	writeJSON(w, http.StatusOK, struct {
		LedgerID string `json:"ledger_id"`
		Status   string `json:"status"`
		Deferred bool   `json:"deferred"`
	}{id.String(), "dropped", false})
}
