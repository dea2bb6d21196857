package server

import (
	"context"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"net/http"
	"strings"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/nswire"
	"nameservice.dev/nameservice/model"
)

// The console: read-only pages at /ui, under the same authentication and
// scopes as the API. A browser authenticates once with its token on
// /ui/login, kept in an HttpOnly, SameSite=Strict cookie; a client that
// sends Authorization itself needs no cookie. Pages are rendered on the
// server (html/template escapes everything) and work without JavaScript;
// the script only keeps them current from /ui/events.

//go:embed ui
var uiFiles embed.FS

var uiPages = template.Must(template.New("").
	Funcs(template.FuncMap{"emptyRow": func() uiRow { return uiRow{} }, "last": func(rows []uiRow) int { return len(rows) - 1 }}).
	ParseFS(uiFiles, "ui/*.html"))

const (
	uiCookie = "ns_console_token"
	// uiCSP allows nothing from elsewhere, and no inline script or style.
	uiCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)

func (s *Server) mountUI(m *http.ServeMux) {
	static, _ := fs.Sub(uiFiles, "ui/static")
	m.Handle("GET /ui/static/", http.StripPrefix("/ui/static/", http.FileServerFS(static)))
	m.HandleFunc("GET /ui/login", s.uiLoginForm)
	m.HandleFunc("POST /ui/login", s.uiLogin)
	m.HandleFunc("POST /ui/logout", s.uiLogout)
	m.HandleFunc("GET /ui", s.uiAuth(s.uiRecords))
	m.HandleFunc("GET /ui/{$}", s.uiAuth(s.uiRecords))
	m.HandleFunc("GET /ui/lag", s.uiAuth(s.uiLag))
	m.HandleFunc("GET /ui/record/{id...}", s.uiAuth(s.uiRecord))
	m.HandleFunc("GET /ui/events", s.uiAuth(s.uiEvents))
}

// uiAuth authenticates a console request: its Authorization header, else
// the console cookie; without either it sends the browser to the login
// page (with NoAuth, everyone is let in).
func (s *Server) uiAuth(h http.HandlerFunc) http.HandlerFunc {
	authed := s.auth(h)
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			if c, err := r.Cookie(uiCookie); err == nil && c.Value != "" {
				r.Header.Set("Authorization", "Bearer "+c.Value)
			} else if !s.opts.NoAuth {
				http.Redirect(w, r, "/ui/login", http.StatusSeeOther)
				return
			}
		}
		uiHeaders(w)
		authed(w, r)
	}
}

func uiHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", uiCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

func (s *Server) render(w http.ResponseWriter, status int, page string, data any) {
	var b strings.Builder
	if err := uiPages.ExecuteTemplate(&b, page, data); err != nil {
		s.log.Error("console template", "page", page, "error", err.Error())
		http.Error(w, "cannot render the page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
}

// uiPage is what every page template gets.
type uiPage struct {
	Title     string
	Principal string
	SignOut   bool   // the caller signed in with a token
	Events    string // the page's event stream, "" for none
	Error     string
	List      *uiList
	Lag       *uiLag
	Record    *uiRecordPage
}

// pageFor starts the page of an authenticated request.
func (s *Server) pageFor(r *http.Request, title string) uiPage {
	return uiPage{Title: title, Principal: principalOf(r.Context()).Name, SignOut: !s.opts.NoAuth}
}

func (s *Server) uiLoginForm(w http.ResponseWriter, _ *http.Request) {
	uiHeaders(w)
	s.render(w, http.StatusOK, "login.html", uiPage{Title: "Sign in"})
}

// uiLogin checks the token a browser posted and keeps it in the console
// cookie. The token is never logged nor echoed.
func (s *Server) uiLogin(w http.ResponseWriter, r *http.Request) {
	uiHeaders(w)
	if err := r.ParseForm(); err != nil {
		s.render(w, http.StatusBadRequest, "login.html", uiPage{Title: "Sign in", Error: "malformed form"})
		return
	}
	tok := r.PostFormValue("token")
	probe := &http.Request{Header: http.Header{"Authorization": {"Bearer " + tok}}}
	if s.opts.Auth == nil || tok == "" || strings.ContainsAny(tok, " \t\r\n;,") {
		s.render(w, http.StatusUnauthorized, "login.html", uiPage{Title: "Sign in", Error: "invalid token"})
		return
	}
	if _, err := s.opts.Auth.Authenticate(probe); err != nil {
		s.metrics.authFailures.Inc()
		s.render(w, http.StatusUnauthorized, "login.html", uiPage{Title: "Sign in", Error: err.Error()})
		return
	}
	http.SetCookie(w, &http.Cookie{Name: uiCookie, Value: tok, Path: "/ui", HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/ui", http.StatusSeeOther)
}

func (s *Server) uiLogout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: uiCookie, Value: "", Path: "/ui", MaxAge: -1, HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/ui/login", http.StatusSeeOther)
}

// uiChange is one event of /ui/events: the record's row after the change,
// and the change itself.
type uiChange struct {
	Row     uiRow      `json:"row"`
	Change  *uiConcern `json:"change,omitempty"`
	Deleted bool       `json:"deleted,omitempty"`
}

// uiEvents streams the changes the caller may see (?id= for one record)
// as "change" events, each with the record's row read after it.
func (s *Server) uiEvents(w http.ResponseWriter, r *http.Request) {
	p := principalOf(r.Context())
	var key watchKey
	if v := r.URL.Query().Get("id"); v != "" {
		id, err := model.ParseID(v)
		if err != nil || !p.CanRead(id.String()) {
			http.NotFound(w, r)
			return
		}
		key.id = id.String()
	}
	ctx, sub, done := s.subscribe(w, r, key)
	if sub == nil {
		return
	}
	defer done()
	sse := nswire.NewSSEWriter(w)
	if sse == nil || sse.Comment("watching") != nil {
		return
	}
	s.pump(ctx, sse, sub.events, func(ev *hubEvent) bool {
		if ev.Err != nil {
			return false
		}
		if !p.CanRead(ev.ID.String()) {
			return true
		}
		return sse.Event("change", "", marshal(s.uiChangeOf(ctx, ev.Event))) == nil
	})
}

func (s *Server) uiChangeOf(ctx context.Context, ev driver.Event) uiChange {
	if ev.Deleted {
		return uiChange{Row: uiRow{ID: ev.ID.String()}, Deleted: true}
	}
	c := concernOf(ev.Concern, ev.New)
	ch := uiChange{Change: &c}
	rec, err := s.ns.Get(ctx, ev.ID)
	switch {
	case err == nil:
		ch.Row = rowOf(rec)
	case errors.Is(err, model.ErrNotFound):
		ch.Row, ch.Deleted = uiRow{ID: ev.ID.String()}, true
	default:
		ch.Row = s.unreadableRow(ctx, &model.RecordError{ID: ev.ID, Object: ev.ID.String(), Err: err})
	}
	return ch
}
