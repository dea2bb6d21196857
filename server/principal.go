package server

import (
	"net/http"

	"nameservice.dev/nameservice/server/auth"
	"nameservice.dev/nameservice/server/fluree"
	"nameservice.dev/nameservice/server/internal/web"
)

// reqInfo is what the server learns about a request while serving it, for
// its log line.
type reqInfo struct{ principal string }

type reqInfoKey struct{}

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
			ri.principal = p.Name
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
