package server

import (
	"context"
	"net/http"

	"nameservice.dev/nameservice/server/auth"
	"nameservice.dev/nameservice/server/fluree"
	"nameservice.dev/nameservice/server/internal/web"
)

// reqInfo is what the server learns about a request while serving it, for
// its log line.
type reqInfo struct{ principal *auth.Principal }

type reqInfoKey struct{}

func (ri *reqInfo) name() string {
	if ri.principal == nil {
		return ""
	}
	return ri.principal.Name
}

// principalName returns the name of ctx's principal, for logs.
func principalName(ctx context.Context) string {
	if p := auth.FromContext(ctx); p != nil {
		return p.Name
	}
	return ""
}

// principalKey returns the key of ctx's principal (see auth.Principal.Key):
// the outcomes of its resent writes are kept under it.
func principalKey(ctx context.Context) string {
	if p := auth.FromContext(ctx); p != nil {
		return p.Key()
	}
	return ""
}

// auth wraps h with authentication (package auth): 401 without a valid
// token, in the answer format of h's route family; else h runs with the
// principal in its request's context (auth.FromContext).
func (s *Server) auth(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p := auth.Unrestricted()
		if !s.opts.NoAuth {
			var err error
			if p, err = auth.Resolve(s.opts.Auth, r, fluree.IsEvents(r), s.opts.EventsAuth); err != nil {
				s.unauthorized(w, r, err)
				return
			}
		}
		if ri, ok := r.Context().Value(reqInfoKey{}).(*reqInfo); ok {
			ri.principal = p
		}
		h(w, r.WithContext(auth.NewContext(r.Context(), p)))
	}
}

func (s *Server) unauthorized(w http.ResponseWriter, r *http.Request, err error) {
	s.metrics.authFailures.Inc()
	w.Header().Set("WWW-Authenticate", `Bearer realm="nameservice"`)
	if _, isFluree := fluree.Rest(r.URL.Path); isFluree {
		fluree.WriteError(w, http.StatusUnauthorized, err.Error())
		return
	}
	web.WriteRaw(w, http.StatusUnauthorized, web.Marshal(map[string]string{"error": err.Error(), "code": "Unauthenticated"}))
}
