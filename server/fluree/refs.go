package fluree

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/internal/cid"
	"nameservice.dev/nameservice/model"
	"nameservice.dev/nameservice/server/internal/web"
)

// flureeRef is Fluree's RefValue: {"id": CID or null, "t": integer}.
type flureeRef struct {
	ID *string `json:"id"`
	T  int64   `json:"t"`
}

// refOf returns v as a RefValue; its address must be a CID.
func refOf(id model.ID, c model.Concern, v model.Value) (flureeRef, error) {
	if v.Unborn() {
		return flureeRef{T: v.V}, nil
	}
	addr := v.Payload.String("address")
	if err := cid.Parse(addr); err != nil {
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

// pushRefRequest is the body of a ref push; New is raw to tell a null from
// a missing value.
type pushRefRequest struct {
	Expected *flureeRef      `json:"expected"`
	New      json.RawMessage `json:"new"`
}

func (a *API) cas(w http.ResponseWriter, r *http.Request, alias, verb string) {
	id, ok := flureeID(w, r, alias, true)
	if !ok {
		return
	}
	var req pushRefRequest
	if !decodeFluree(w, r, &req) {
		return
	}
	if len(req.New) == 0 || string(req.New) == "null" {
		WriteError(w, http.StatusUnprocessableEntity, "Failed to deserialize the JSON body into the target type: missing field `new`")
		return
	}
	var next flureeRef
	if err := json.Unmarshal(req.New, &next); err != nil {
		WriteError(w, http.StatusUnprocessableEntity, "Failed to deserialize the JSON body into the target type: new: "+err.Error())
		return
	}
	for _, ref := range []*flureeRef{req.Expected, &next} {
		if ref != nil && ref.ID != nil {
			if err := cid.Parse(*ref.ID); err != nil {
				WriteError(w, http.StatusUnprocessableEntity, "Failed to deserialize the JSON body into the target type: invalid CID string: "+err.Error())
				return
			}
		}
	}
	if next.ID == nil || next.T < 1 {
		WriteError(w, http.StatusBadRequest, "new must name a content ID at t >= 1")
		return
	}
	c := model.Head
	if verb == "index" {
		c = model.Index
	}
	var expected *model.Value
	if e := req.Expected; e != nil {
		v := model.Value{V: e.T} // unborn at t when id is null
		if e.ID != nil {
			v = model.RefValue(*e.ID, e.T)
		}
		expected = &v
	}
	ctx, cancel := web.OpContext(r, a.OpTimeout)
	defer cancel()
	out, err := a.NS.CompareAndSetRef(ctx, id.String(), c, expected, nameservice.Ref{Address: *next.ID, T: next.T})
	err = a.Public.Error(ctx, "compare-and-set "+verb+" "+id.String(), err)
	switch {
	case errors.Is(err, model.ErrNotFound) || errors.Is(err, model.ErrWrongKind):
		a.Conflicts.WithLabelValues(c.String()).Inc()
		web.WriteJSON(w, http.StatusConflict, casAnswer{Status: "conflict"})
		return
	case errors.Is(err, model.ErrInvalidArgument):
		WriteError(w, http.StatusBadRequest, err.Error())
		return
	case err != nil: // Public.Error counted an unknown outcome
		WriteError(w, http.StatusInternalServerError, "CAS operation failed: "+err.Error())
		return
	case out.Applied:
		web.WriteJSON(w, http.StatusOK, casAnswer{Status: "updated", Ref: &next})
		return
	}
	a.Conflicts.WithLabelValues(c.String()).Inc()
	actual, err := refOf(id, c, out.Current)
	if err != nil {
		WriteError(w, http.StatusBadRequest, err.Error())
		return
	}
	web.WriteJSON(w, http.StatusConflict, casAnswer{Status: "conflict", Actual: &actual})
}

// casAnswer is Fluree's PushRefResponse.
type casAnswer struct {
	Status string     `json:"status"`
	Ref    *flureeRef `json:"ref,omitempty"`
	Actual *flureeRef `json:"actual,omitempty"`
}

func (a *API) initLedger(w http.ResponseWriter, r *http.Request, alias string) {
	id, ok := flureeID(w, r, alias, true)
	if !ok {
		return
	}
	ctx, cancel := web.OpContext(r, a.OpTimeout)
	defer cancel()
	err := a.Public.Error(ctx, "init "+id.String(), a.NS.Init(ctx, id.String()))
	switch {
	case err == nil, errors.Is(err, model.ErrAlreadyExists):
		web.WriteJSON(w, http.StatusOK, map[string]bool{"created": err == nil})
	default:
		WriteError(w, http.StatusInternalServerError, "Init failed: "+err.Error())
	}
}

func (a *API) lookup(w http.ResponseWriter, r *http.Request, alias string) {
	id, ok := flureeID(w, r, alias, false)
	if !ok {
		return
	}
	rec, err := a.NS.Get(r.Context(), id)
	switch {
	case err != nil && !errors.Is(err, model.ErrNotFound):
		WriteError(w, http.StatusInternalServerError, "Nameservice lookup failed: "+a.Public.Error(r.Context(), "get "+id.String(), err).Error())
		return
	case err != nil || rec.Kind != model.Ledger:
		ledgerNotFound(w)
		return
	}
	ns, err := nsRecordOf(rec)
	if err != nil {
		WriteError(w, http.StatusBadRequest, err.Error())
		return
	}
	web.WriteJSON(w, http.StatusOK, nsRecordResp{nsRecord: ns, DefaultContext: ns.DefaultContext, ConfigID: ns.ConfigID})
}
