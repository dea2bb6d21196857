package server

import (
	"context"
	"net/http"

	"nameservice.dev/nameservice/server/auth"
)

// reqInfo is what the server learns about a request while serving it.
type reqInfo struct{ principal *auth.Principal }

type reqInfoKey struct{}

func (ri *reqInfo) name() string {
	if ri.principal == nil {
		return ""
	}
	return ri.principal.Name
}

func principalOf(ctx context.Context) *auth.Principal {
	if ri, ok := ctx.Value(reqInfoKey{}).(*reqInfo); ok && ri.principal != nil {
		return ri.principal
	}
	return nil
}

// principalName returns the name of ctx's principal, for logs.
func principalName(ctx context.Context) string {
	if p := principalOf(ctx); p != nil {
		return p.Name
	}
	return ""
}

// principalKey returns the key of ctx's principal (see auth.Principal.Key):
// the outcomes of its resent writes are kept under it.
func principalKey(ctx context.Context) string {
	if p := principalOf(ctx); p != nil {
		return p.Key()
	}
	return ""
}

// auth wraps h with authentication (package auth): 401 without a valid
// token, in the answer format of h's route family.
func (s *Server) auth(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ri, _ := r.Context().Value(reqInfoKey{}).(*reqInfo)
		if ri == nil {
			ri = &reqInfo{}
			r = r.WithContext(context.WithValue(r.Context(), reqInfoKey{}, ri))
		}
		if s.opts.NoAuth {
			ri.principal = auth.Unrestricted()
		} else {
			p, err := auth.Resolve(s.opts.Auth, r, isEventsRoute(r), s.opts.EventsAuth)
			if err != nil {
				s.unauthorized(w, r, err)
				return
			}
			ri.principal = p
		}
		h(w, r)
	}
}

// isEventsRoute reports whether r is for Fluree's events route.
func isEventsRoute(r *http.Request) bool {
	rest, fluree := flureeRest(r.URL.EscapedPath())
	return fluree && rest == "/events"
}

func (s *Server) unauthorized(w http.ResponseWriter, r *http.Request, err error) {
	s.metrics.authFailures.Inc()
	w.Header().Set("WWW-Authenticate", `Bearer realm="nameservice"`)
	if _, fluree := flureeRest(r.URL.Path); fluree {
		writeFlureeError(w, http.StatusUnauthorized, err.Error())
		return
	}
	writeRaw(w, http.StatusUnauthorized, marshal(map[string]string{"error": err.Error(), "code": "Unauthenticated"}))
}
