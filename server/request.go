package server

import (
	"encoding/json"
	"errors"
	"net/http"

	"nameservice.dev/nameservice/internal/nswire"
	"nameservice.dev/nameservice/model"
	"nameservice.dev/nameservice/server/auth"
	"nameservice.dev/nameservice/server/fluree"
	"nameservice.dev/nameservice/server/internal/web"
)

// in is what a /ns/v1 handler reads of its request, through read.
type in struct {
	need  access // on the ID; needNone for a route without one
	query bool   // the ID is the query's id (optional there), not the path's
	// body, when not nil, receives the JSON body: by its UnmarshalJSON
	// when it has one (a record's own parser), else web.DecodeStrict.
	body     any
	optional bool // the body may be empty (body is then left as it is)
}

// access is what a caller must be allowed on a request's ID.
type access int

const (
	needNone access = iota
	needRead
	needWrite
	needAdmin
)

// read reads r as spec says, returning the ID (zero for none) and the body
// as sent, which the idempotency cache compares. It answers the request
// itself (and returns false) when a part is wrong: 400 for a malformed ID
// or body, 404 for an ID outside the caller's read scope (as for a missing
// record), 403 for one it may read but not write (or administer), 413 for a
// body too large.
func (s *Server) read(w http.ResponseWriter, r *http.Request, spec in) (id model.ID, raw []byte, ok bool) {
	if spec.need != needNone {
		path := r.PathValue("id")
		if spec.query {
			path = r.URL.Query().Get("id")
		}
		if path != "" || !spec.query {
			var err error
			if id, err = model.ParseID(path); err != nil {
				writeError(w, err)
				return id, nil, false
			}
			if !allowed(w, auth.FromContext(r.Context()), id, spec.need) {
				return id, nil, false
			}
		}
	}
	if spec.body == nil {
		return id, nil, true
	}
	raw, err := web.ReadBody(r)
	if _, ok := errors.AsType[*web.TooLargeError](err); ok {
		web.WriteJSON(w, http.StatusRequestEntityTooLarge, nswire.Error{Error: err.Error(), Code: model.InvalidArgument.String()})
		return id, nil, false
	} else if err != nil {
		writeError(w, err)
		return id, nil, false
	}
	if len(raw) == 0 && spec.optional {
		return id, raw, true
	}
	if u, ok := spec.body.(json.Unmarshaler); ok {
		err = u.UnmarshalJSON(raw)
	} else {
		err = web.DecodeStrict(raw, spec.body)
	}
	if err != nil {
		writeError(w, err)
		return id, raw, false
	}
	return id, raw, true
}

// allowed answers the refusal and returns false unless p has need on id:
// 403 when p may read id, else 404 (as for a missing record).
func allowed(w http.ResponseWriter, p *auth.Principal, id model.ID, need access) bool {
	ok, refusal := p.CanRead(id.String()), ""
	switch need {
	case needWrite:
		ok, refusal = p.CanWrite(id.String()), "no write access to "+id.String()
	case needAdmin:
		ok, refusal = p.CanAdmin(id.String()), "reset-head needs the admin scope on "+id.String()
	}
	switch {
	case ok:
		return true
	case refusal != "" && p.CanRead(id.String()):
		web.WriteJSON(w, http.StatusForbidden, nswire.Error{Error: refusal, Code: "PermissionDenied"})
	default:
		web.WriteRaw(w, http.StatusNotFound, notFoundBody(id))
	}
	return false
}

// principalLogKey holds where auth leaves the principal's name for the log.
type principalLogKey struct{}

// auth wraps h with authentication (web.Env.Auth).
func (s *Server) auth(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p := auth.Unrestricted()
		if !s.opts.NoAuth {
			var err error
			if p, err = auth.Resolve(s.opts.Auth, r, fluree.IsEvents(r), s.opts.EventsAuth); err != nil {
				s.metrics.authFailures.Inc()
				w.Header().Set("WWW-Authenticate", `Bearer realm="nameservice"`)
				if _, isFluree := fluree.Rest(r.URL.Path); isFluree {
					fluree.WriteError(w, http.StatusUnauthorized, err.Error())
				} else {
					body := map[string]string{"error": err.Error(), "code": "Unauthenticated"}
					web.WriteJSON(w, http.StatusUnauthorized, body)
				}
				return
			}
		}
		if name, ok := r.Context().Value(principalLogKey{}).(*string); ok {
			*name = p.Name
		}
		h(w, r.WithContext(auth.NewContext(r.Context(), p)))
	}
}
