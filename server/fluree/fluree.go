// Package fluree serves Fluree's nameservice protocol over the nameservice:
// the routes a Fluree server or client calls under /v1/fluree (and
// /fluree), with Fluree's bodies and errors, field for field, and
// /.well-known/fluree.json. Package server mounts it (see Config).
package fluree

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"nameservice.dev/nameservice/model"
	"nameservice.dev/nameservice/server/auth"
	"nameservice.dev/nameservice/server/internal/web"
)

// Base is the prefix of Fluree's versioned API. The routes are also served
// under Bare, where a Fluree client given the bare origin sends them.
const (
	Base = "/v1/fluree"
	Bare = "/fluree"
)

// Rest returns path without its Fluree prefix, and whether it had one.
func Rest(path string) (string, bool) {
	for _, p := range []string{Base + "/", Bare + "/"} {
		if strings.HasPrefix(path, p) {
			return path[len(p)-1:], true
		}
	}
	return path, false
}

// Config is what the routes need of the server; every field must be set.
type Config struct {
	web.Env
	// TokenAuth makes the discovery document advertise token auth.
	TokenAuth bool
	Registry  prometheus.Registerer  // receives the count of records left out
	Conflicts *prometheus.CounterVec // pushes not applied, by concern
	Now       func() time.Time       // the clock of emitted_at
	OpTimeout time.Duration          // bounds one backend operation
}

// API is Fluree's protocol over one NameService.
type API struct {
	Config
	skipped *prometheus.CounterVec // records left out of the answers
}

// New returns the routes of cfg.
func New(cfg Config) *API {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "nameservice_fluree_records_skipped_total",
		Help: "Records left out of Fluree's snapshot and event streams: unreadable, or not expressible on Fluree's wire.",
	}, []string{"route", "reason"})
	cfg.Registry.MustRegister(c)
	for _, route := range []string{"snapshot", "events"} {
		for _, reason := range []string{skipUnreadable, skipNotExpressible} {
			c.WithLabelValues(route, reason)
		}
	}
	return &API{Config: cfg, skipped: c}
}

// Mount registers the routes on m.
func (a *API) Mount(m *http.ServeMux) {
	m.HandleFunc("GET /.well-known/fluree.json", a.discovery)
	for _, p := range []string{Base, Bare} {
		m.HandleFunc(p+"/", a.Auth(a.fluree))
		// Every method, so that another one gets 405, not the catch-all's 404.
		m.HandleFunc(p+"/branch", a.Auth(only(http.MethodPost, a.createBranch)))
		m.HandleFunc(p+"/branch/{ledger...}", a.Auth(only(http.MethodGet, a.listBranches)))
		m.HandleFunc(p+"/drop-branch", a.Auth(only(http.MethodPost, a.dropBranch)))
	}
}

// CatchAll reports whether pattern is one of Mount's catch-all routes,
// labelled by RouteLabel.
func CatchAll(pattern string) bool { return pattern == Base+"/" || pattern == Bare+"/" }

// RouteLabel names the route of a request for path on a catch-all route,
// for metrics and logs: method and the route without its alias, or
// "unmatched"; from a fixed set, as method must be, so that requests cannot
// grow the number of series.
func RouteLabel(method, path string) string {
	p, _ := Rest(path)
	if rt, _ := route(p); rt != "" {
		return method + " " + Base + rt
	}
	return "unmatched"
}

// route returns the route of p, a path under a Fluree prefix, without its
// alias ("" for none), and the alias as it travels.
func route(p string) (rt, alias string) {
	switch {
	case p == "/nameservice/snapshot", p == "/events":
		return p, ""
	case strings.HasPrefix(p, "/storage/ns/"):
		return "/storage/ns/{alias}", strings.TrimPrefix(p, "/storage/ns/")
	case strings.HasPrefix(p, "/nameservice/refs/"):
		rest := strings.TrimPrefix(p, "/nameservice/refs/")
		i := strings.LastIndexByte(rest, '/')
		switch verb := rest[i+1:]; verb {
		case "commit", "index", "init":
			return "/nameservice/refs/{alias}/" + verb, rest[:max(i, 0)]
		}
	}
	return "", ""
}

// EventsRoute is the label of a GET of the events route (see RouteLabel).
const EventsRoute = "GET " + Base + "/events"

// IsEvents reports whether r is for the events route (see auth.EventsAuth).
func IsEvents(r *http.Request) bool {
	rest, fluree := Rest(r.URL.EscapedPath())
	return fluree && rest == "/events"
}

func (a *API) discovery(w http.ResponseWriter, _ *http.Request) {
	doc := struct { // Fluree's key order
		Version int               `json:"version"`
		APIBase string            `json:"api_base_url"`
		Auth    map[string]string `json:"auth,omitempty"`
	}{Version: 1, APIBase: Base}
	if a.TokenAuth {
		doc.Auth = map[string]string{"type": "token"}
	}
	web.WriteJSON(w, http.StatusOK, doc)
}

// fluree routes the requests under /v1/fluree. An alias may travel
// percent-encoded as one segment (Fluree's form) or with its slashes: the
// verb is the last segment, so either is unambiguous.
func (a *API) fluree(w http.ResponseWriter, r *http.Request) {
	path, _ := Rest(r.URL.EscapedPath())
	rt, raw := route(path)
	ref := strings.HasPrefix(rt, "/nameservice/refs/")
	if rt == "" || (ref && raw == "") {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	alias := raw
	if strings.Contains(rt, "{alias}") {
		var err error
		if alias, err = url.PathUnescape(raw); err != nil || alias == "" {
			WriteError(w, http.StatusBadRequest, "alias is not a percent-encoded ledger alias")
			return
		}
	}
	want := http.MethodGet
	if ref {
		want = http.MethodPost
	}
	if r.Method != want {
		w.Header().Set("Allow", want)
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	switch rt {
	case "/nameservice/snapshot":
		a.snapshot(w, r)
	case "/events":
		a.events(w, r)
	case "/storage/ns/{alias}":
		a.lookup(w, r, alias)
	case "/nameservice/refs/{alias}/init":
		a.initLedger(w, r, alias)
	default:
		a.cas(w, r, alias, rt[strings.LastIndexByte(rt, '/')+1:])
	}
}

// flureeID parses a Fluree alias, answering 400 for an invalid one and 404
// when the caller may not touch it.
func flureeID(w http.ResponseWriter, r *http.Request, alias string, write bool) (model.ID, bool) {
	id, err := model.ParseID(alias)
	if err != nil {
		WriteError(w, http.StatusBadRequest, err.Error())
		return id, false
	}
	p := auth.FromContext(r.Context())
	if (write && !p.CanWrite(id.String())) || !p.CanRead(id.String()) {
		ledgerNotFound(w)
		return id, false
	}
	return id, true
}

// Fluree's error types (fluree-vocab errors.rs).
const (
	errTypeBadRequest   = "err:api/BadRequest"
	errTypeNotFound     = "err:api/NotFound"
	errTypeJSONParse    = "err:parse/JsonParse"
	errTypeUnauthorized = "err:policy/Unauthorized"
	errTypeInternal     = "err:system/InternalError"
)

// flureeError is Fluree's error body.
type flureeError struct {
	Error  string `json:"error"`
	Status int    `json:"status"`
	Type   string `json:"@type"`
}

// WriteError answers status with Fluree's error body, typed by status.
func WriteError(w http.ResponseWriter, status int, msg string) {
	t := errTypeInternal
	switch status {
	case http.StatusBadRequest:
		t, msg = errTypeBadRequest, "Bad request: "+msg
	case http.StatusUnprocessableEntity, http.StatusUnsupportedMediaType:
		t = errTypeJSONParse
	case http.StatusUnauthorized:
		t = errTypeUnauthorized
	case http.StatusNotFound:
		t = errTypeNotFound
	}
	writeTyped(w, status, t, msg)
}

func writeTyped(w http.ResponseWriter, status int, typ, msg string) {
	web.WriteJSON(w, status, flureeError{Error: msg, Status: status, Type: typ})
}

// ledgerNotFound answers an unknown alias, or one outside the scope.
func ledgerNotFound(w http.ResponseWriter) {
	WriteError(w, http.StatusNotFound, "Ledger not found")
}

// decodeFluree decodes a JSON body as axum's Json extractor: 415 without a
// JSON content type, 400 for a syntax error, 422 for a body of the wrong
// shape; unknown fields are ignored.
func decodeFluree(w http.ResponseWriter, r *http.Request, v any) bool {
	ct := r.Header.Get("Content-Type")
	if mt, _, _ := strings.Cut(ct, ";"); strings.TrimSpace(mt) != "application/json" && !strings.HasSuffix(strings.TrimSpace(mt), "+json") {
		WriteError(w, http.StatusUnsupportedMediaType, "Expected request with `Content-Type: application/json`")
		return false
	}
	body, err := web.ReadBody(r)
	if _, ok := errors.AsType[*web.TooLargeError](err); ok {
		WriteError(w, http.StatusRequestEntityTooLarge, err.Error())
		return false
	} else if err != nil {
		WriteError(w, http.StatusBadRequest, err.Error())
		return false
	}
	if err := json.Unmarshal(body, v); err != nil {
		if _, syntax := errors.AsType[*json.SyntaxError](err); syntax || errors.Is(err, io.ErrUnexpectedEOF) || !json.Valid(body) {
			WriteError(w, http.StatusBadRequest, "Failed to parse the request body as JSON: "+err.Error())
			return false
		}
		WriteError(w, http.StatusUnprocessableEntity, "Failed to deserialize the JSON body into the target type: "+err.Error())
		return false
	}
	return true
}
