// Package console serves the console: read-only pages at /ui over the
// records a caller may read, with the API's authentication and scopes. A
// browser signs in once on /ui/login, its token kept in an HttpOnly,
// SameSite=Strict cookie. Pages are rendered on the server and work
// without JavaScript; the script only keeps them current from /ui/events.
package console

import (
	"context"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/nswire"
	"nameservice.dev/nameservice/model"
	"nameservice.dev/nameservice/server/auth"
	"nameservice.dev/nameservice/server/internal/web"
)

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

// Config is what the console needs of the server; every field but
// Authenticator must be set.
type Config struct {
	web.Env
	// Authenticator checks the token a browser signs in with; nil refuses
	// every sign-in.
	Authenticator *auth.Authenticator
	// NoAuth lets everyone in, with full rights.
	NoAuth       bool
	AuthFailures prometheus.Counter // counts refused sign-ins
}

// Console is the console over one NameService.
type Console struct{ Config }

// New returns the console of cfg.
func New(cfg Config) *Console { return &Console{cfg} }

// Mount registers the console's routes, under /ui, on m.
func (cs *Console) Mount(m *http.ServeMux) {
	static, _ := fs.Sub(uiFiles, "ui/static")
	m.Handle("GET /ui/static/", http.StripPrefix("/ui/static/", http.FileServerFS(static)))
	m.HandleFunc("GET /ui/login", cs.uiLoginForm)
	m.HandleFunc("POST /ui/login", cs.uiLogin)
	m.HandleFunc("POST /ui/logout", cs.uiLogout)
	m.HandleFunc("GET /ui", cs.uiAuth(cs.uiRecords))
	m.HandleFunc("GET /ui/{$}", cs.uiAuth(cs.uiRecords))
	m.HandleFunc("GET /ui/lag", cs.uiAuth(cs.uiLag))
	m.HandleFunc("GET /ui/record/{id...}", cs.uiAuth(cs.uiRecord))
	m.HandleFunc("GET /ui/events", cs.uiAuth(cs.uiEvents))
}

// uiAuth authenticates a console request by its Authorization header,
// else the console cookie, else sends it to the login page.
func (cs *Console) uiAuth(h http.HandlerFunc) http.HandlerFunc {
	authed := cs.Auth(h)
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			if c, err := r.Cookie(uiCookie); err == nil && c.Value != "" {
				r.Header.Set("Authorization", "Bearer "+c.Value)
			} else if !cs.NoAuth {
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

func (cs *Console) render(w http.ResponseWriter, status int, page string, data any) {
	var b strings.Builder
	if err := uiPages.ExecuteTemplate(&b, page, data); err != nil {
		cs.Log.Error("console template", "page", page, "error", err.Error())
		http.Error(w, "cannot render the page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
}

func (cs *Console) renderError(w http.ResponseWriter, r *http.Request, status int, title, msg string) {
	page := cs.pageFor(r, title)
	page.Error = msg
	cs.render(w, status, "error.html", page)
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
func (cs *Console) pageFor(r *http.Request, title string) uiPage {
	return uiPage{Title: title, Principal: auth.FromContext(r.Context()).Name, SignOut: !cs.NoAuth}
}

func (cs *Console) uiLoginForm(w http.ResponseWriter, _ *http.Request) {
	uiHeaders(w)
	cs.render(w, http.StatusOK, "login.html", uiPage{Title: "Sign in"})
}

// uiLogin keeps the token a browser posted, if good, in the console cookie;
// it is never logged nor echoed.
func (cs *Console) uiLogin(w http.ResponseWriter, r *http.Request) {
	uiHeaders(w)
	if err := r.ParseForm(); err != nil {
		cs.render(w, http.StatusBadRequest, "login.html", uiPage{Title: "Sign in", Error: "malformed form"})
		return
	}
	tok := r.PostFormValue("token")
	probe := &http.Request{Header: http.Header{"Authorization": {"Bearer " + tok}}}
	if cs.Authenticator == nil || tok == "" || strings.ContainsAny(tok, " \t\r\n;,") {
		cs.render(w, http.StatusUnauthorized, "login.html", uiPage{Title: "Sign in", Error: "invalid token"})
		return
	}
	if _, err := cs.Authenticator.Authenticate(probe); err != nil {
		cs.AuthFailures.Inc()
		cs.render(w, http.StatusUnauthorized, "login.html", uiPage{Title: "Sign in", Error: err.Error()})
		return
	}
	http.SetCookie(w, &http.Cookie{Name: uiCookie, Value: tok, Path: "/ui", HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/ui", http.StatusSeeOther)
}

func (cs *Console) uiLogout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: uiCookie, Value: "", Path: "/ui", MaxAge: -1, HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/ui/login", http.StatusSeeOther)
}

// uiChange is one event of /ui/events.
type uiChange struct {
	Row     uiRow      `json:"row"`
	Change  *uiConcern `json:"change,omitempty"`
	Deleted bool       `json:"deleted,omitempty"`
}

// uiEvents streams the changes the caller may see (?id= for one record),
// each with the record's row read after it.
func (cs *Console) uiEvents(w http.ResponseWriter, r *http.Request) {
	p := auth.FromContext(r.Context())
	var id string
	if v := r.URL.Query().Get("id"); v != "" {
		parsed, err := model.ParseID(v)
		if err != nil || !p.CanRead(parsed.String()) {
			http.NotFound(w, r)
			return
		}
		id = parsed.String()
	}
	stream := cs.Subscribe(w, r, id)
	if stream == nil {
		return
	}
	defer stream.Close()
	ctx := stream.Ctx
	sse := nswire.NewSSEWriter(w)
	if sse == nil || sse.Comment("watching") != nil {
		return
	}
	stream.Pump(sse, func(ev *web.Event) bool {
		if ev.Err != nil {
			return false
		}
		if !p.CanRead(ev.ID.String()) {
			return true
		}
		return sse.Event("change", "", web.Marshal(cs.uiChangeOf(ctx, ev.Event))) == nil
	})
}

func (cs *Console) uiChangeOf(ctx context.Context, ev driver.Event) uiChange {
	if ev.Deleted {
		return uiChange{Row: uiRow{ID: ev.ID.String()}, Deleted: true}
	}
	c := concernOf(ev.Concern, ev.New)
	ch := uiChange{Change: &c}
	rec, err := cs.NS.Get(ctx, ev.ID)
	switch {
	case err == nil:
		ch.Row = rowOf(rec)
	case errors.Is(err, model.ErrNotFound):
		ch.Row, ch.Deleted = uiRow{ID: ev.ID.String()}, true
	default:
		ch.Row = cs.unreadableRow(ctx, &model.RecordError{ID: ev.ID, Object: ev.ID.String(), Err: err})
	}
	return ch
}
