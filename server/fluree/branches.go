package fluree

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/model"
	"nameservice.dev/nameservice/server/auth"
	"nameservice.dev/nameservice/server/internal/web"
)

// Fluree's branch routes (POST /fluree/branch, GET /fluree/branch/{ledger},
// POST /fluree/drop-branch), with Fluree's bodies. Fluree's `at` names a
// commit that only its commit store can resolve: it is refused here.

// only answers 405 to a request whose method is not method.
func only(method string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != method {
			w.Header().Set("Allow", method)
			writeTyped(w, http.StatusMethodNotAllowed, errTypeBadRequest, "method not allowed: use "+method)
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

// flureeAnswer writes err in Fluree's form, with the types of Fluree's own
// refusals.
func flureeAnswer(w http.ResponseWriter, err error) {
	switch model.Code(err) {
	case model.NotFound:
		ledgerNotFound(w)
	case model.AlreadyExists:
		writeTyped(w, http.StatusConflict, "err:db/LedgerExists", err.Error())
	case model.HasBranches:
		writeTyped(w, http.StatusConflict, "err:system/NameServiceError", err.Error())
	case model.InvalidArgument, model.WrongKind:
		WriteError(w, http.StatusBadRequest, err.Error())
	default:
		WriteError(w, http.StatusInternalServerError, err.Error())
	}
}

// flureeBranchBody reads the body of a create or drop and the branch's ID.
func flureeBranchBody(w http.ResponseWriter, r *http.Request) (flureeBranchRequest, model.ID, bool) {
	var req flureeBranchRequest
	body, err := web.ReadBody(r)
	if err == nil {
		err = web.DecodeStrict(body, &req)
	}
	if err != nil {
		WriteError(w, http.StatusBadRequest, err.Error())
		return req, model.ID{}, false
	}
	id, err := model.ParseID(req.Ledger + ":" + req.Branch)
	if err != nil || req.Ledger == "" || req.Branch == "" {
		WriteError(w, http.StatusBadRequest, fmt.Sprintf("ledger and branch must name a branch: %v", err))
		return req, id, false
	}
	return req, id, true
}

// flureeCanWrite answers 403 or 404 unless the caller may write id and
// read src.
func flureeCanWrite(w http.ResponseWriter, r *http.Request, id, src model.ID) bool {
	switch p := auth.FromContext(r.Context()); {
	case p.CanWrite(id.String()) && p.CanRead(src.String()):
		return true
	case p.CanRead(id.String()):
		writeTyped(w, http.StatusForbidden, "err:policy/AccessDenied", "no write access to "+id.String())
	default:
		ledgerNotFound(w)
	}
	return false
}

func (a *API) createBranch(w http.ResponseWriter, r *http.Request) {
	req, id, ok := flureeBranchBody(w, r)
	if !ok {
		return
	}
	if req.At != nil {
		WriteError(w, http.StatusBadRequest, "at: this nameservice has no commit store to resolve a commit by t or content ID; POST /ns/v1/branches/{id} takes its address and t")
		return
	}
	src, err := model.ParseID(req.Ledger + ":" + cmp.Or(req.Source, model.DefaultBranch))
	if err != nil {
		WriteError(w, http.StatusBadRequest, err.Error())
		return
	}
	if !flureeCanWrite(w, r, id, src) {
		return
	}
	ctx, cancel := web.OpContext(r, a.OpTimeout)
	defer cancel()
	rec, err := a.NS.CreateBranch(ctx, id.String(), nameservice.BranchOptions{From: src.Branch})
	if err != nil {
		flureeAnswer(w, a.Public.Error(ctx, "create branch "+id.String(), err))
		return
	}
	web.WriteJSON(w, http.StatusCreated, struct {
		LedgerID string `json:"ledger_id"`
		Branch   string `json:"branch"`
		Source   string `json:"source"`
		T        int64  `json:"t"`
	}{rec.ID.String(), rec.ID.Branch, rec.SourceBranch, rec.Head.V})
}

// listBranches lists the live branches of a ledger the caller may read.
func (a *API) listBranches(w http.ResponseWriter, r *http.Request) {
	ledger := r.PathValue("ledger")
	p := auth.FromContext(r.Context())
	out := []flureeBranchInfo{}
	for rec, err := range a.NS.ListBranches(r.Context(), ledger) {
		var bad *model.RecordError
		switch {
		case errors.As(err, &bad):
			continue // unreadable: Fluree's listing knows no such entry
		case errors.Is(err, model.ErrInvalidArgument), errors.Is(err, model.ErrInvalidID):
			WriteError(w, http.StatusBadRequest, err.Error())
			return
		case err != nil:
			WriteError(w, http.StatusInternalServerError, a.Public.Error(r.Context(), "list branches", err).Error())
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
	web.WriteJSON(w, http.StatusOK, out)
}

func (a *API) dropBranch(w http.ResponseWriter, r *http.Request) {
	_, id, ok := flureeBranchBody(w, r)
	if !ok || !flureeCanWrite(w, r, id, id) {
		return
	}
	ctx, cancel := web.OpContext(r, a.OpTimeout)
	defer cancel()
	// As Fluree's drop_branch: a ledger's root (a record without a source
	// branch) is refused; only a drop of the whole ledger removes it.
	rec, err := a.NS.Lookup(ctx, id.String())
	if err != nil {
		flureeAnswer(w, a.Public.Error(ctx, "drop branch "+id.String(), err))
		return
	}
	if rec.SourceBranch == "" {
		writeTyped(w, http.StatusBadRequest, errTypeInternal, fmt.Sprintf(
			"Cannot drop '%s': it is the root of ledger '%s'. Use drop_ledger to remove the whole ledger.", id.Branch, id.Name))
		return
	}
	if err := a.NS.DropBranch(ctx, id.String()); err != nil {
		flureeAnswer(w, a.Public.Error(ctx, "drop branch "+id.String(), err))
		return
	}
	web.WriteJSON(w, http.StatusOK, struct {
		LedgerID string `json:"ledger_id"`
		Status   string `json:"status"`
		Deferred bool   `json:"deferred"`
	}{id.String(), "dropped", false})
}
