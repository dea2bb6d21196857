// Package auth decides who calls the server and what they may do: static
// tokens, Fluree's did:key JWS, OIDC tokens, and the events route's modes.
// It knows no route; package server turns its answers into HTTP ones.
package auth

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"nameservice.dev/nameservice/model"
)

// Principal is who a request acts for, and what it may touch.
type Principal struct {
	// Name identifies the principal in logs (a static token's name or a
	// JWS issuer), never the token.
	Name string
	// Read, Write and Admin (reset-head; only static tokens have any) are
	// ID prefixes; "" covers every ID.
	Read, Write, Admin []string
	// Exact IDs the principal may read and write (Fluree's
	// fluree.storage.ledgers), normalised.
	Exact map[string]bool
	// Fluree's events claims; a static token's events scope is its read
	// scope.
	eventsAll  bool
	events     map[model.Kind]map[string]bool // the IDs of each kind
	jws        bool
	storageAll bool // Fluree's fluree.storage.all, or an unrestricted read
	key        string
}

// Key tells principals apart, for what is counted or kept per principal:
// "token:" and a static token's name, or "jws:" and a JWS's issuer and
// identity; "" for an anonymous principal or one built outside this package.
// Two principals with the same non-empty key act for the same caller.
func (p *Principal) Key() string { return p.key }

func covers(prefixes []string, id string) bool {
	return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(id, p) })
}

// CanRead reports whether p may read record id (normalised).
func (p *Principal) CanRead(id string) bool { return covers(p.Read, id) || p.Exact[id] }

// CanWrite reports whether p may write record id (normalised).
func (p *Principal) CanWrite(id string) bool { return covers(p.Write, id) || p.Exact[id] }

// CanAdmin reports whether p may run administrator operations on id.
func (p *Principal) CanAdmin(id string) bool { return covers(p.Admin, id) }

// CanWriteUnder reports whether p may write every ID under prefix.
func (p *Principal) CanWriteUnder(prefix string) bool { return covers(p.Write, prefix) }

// ReadsAll reports whether p may read every record.
func (p *Principal) ReadsAll() bool { return slices.Contains(p.Read, "") }

// CanEvent reports whether p may see the events of record id of kind k.
func (p *Principal) CanEvent(k model.Kind, id string) bool {
	if !p.jws {
		return p.CanRead(id)
	}
	return p.eventsAll || p.events[k][id]
}

// ListsGraphSources reports whether a listing of every record shows p the
// graph sources in its scope: not to a JWS scoped to some ledgers, as in
// Fluree.
func (p *Principal) ListsGraphSources() bool { return p.storageAll || !p.jws }

// grants refuses, with a 401 as Fluree's server does, a JWS whose claims
// grant nothing on the request's routes: fluree.events.* on the events
// route, fluree.storage.* on every other.
func (p *Principal) grants(events bool) error {
	switch {
	case !p.jws:
		return nil
	case events && !p.eventsAll && len(p.events[model.Ledger])+len(p.events[model.GraphSource]) == 0:
		return errUnauthorized{"token authorizes no resources (no fluree.events claims)"}
	case !events && !p.storageAll && len(p.Exact) == 0:
		return errUnauthorized{"token lacks storage permissions (no fluree.storage claims)"}
	}
	return nil
}

// allRights is the principal of every request when authentication is off.
var allRights = &Principal{Name: "anonymous (no auth)", Read: []string{""}, Write: []string{""}, Admin: []string{""}, storageAll: true}

// Unrestricted returns the principal of a server without authentication:
// it may do anything. Callers must not modify it.
func Unrestricted() *Principal { return allRights }

// Authenticator verifies bearer tokens: static tokens (stored as SHA-256
// hashes), Fluree's JWS from trusted did:key issuers, and OIDC tokens.
type Authenticator struct {
	tokens  map[[32]byte]*Principal
	issuers map[string]bool
	oidc    *jwks // nil without an OIDC issuer
	now     func() time.Time
}

// Config configures NewAuthenticator.
type Config struct {
	Tokens         []TokenEntry
	TrustedIssuers []string // did:key identifiers
	// OIDC, when set, accepts the tokens of an OIDC issuer.
	OIDC *OIDCConfig
	// Now is the clock of tokens' times and the OIDC key set's age;
	// nil: time.Now.
	Now func() time.Time
}

// NewAuthenticator checks cfg (see checkTokens; an issuer must be an
// Ed25519 did:key) and returns an authenticator.
func NewAuthenticator(cfg Config) (*Authenticator, error) {
	tokens, err := checkTokens(cfg.Tokens)
	if err != nil {
		return nil, err
	}
	a := &Authenticator{tokens: tokens, issuers: map[string]bool{}, now: cfg.Now}
	if a.now == nil {
		a.now = time.Now
	}
	for _, iss := range cfg.TrustedIssuers {
		if _, err := pubKeyFromDID(iss); err != nil {
			return nil, fmt.Errorf("trusted issuer %q: %w", iss, err)
		}
		a.issuers[iss] = true
	}
	if cfg.OIDC != nil {
		if a.oidc, err = newJWKS(*cfg.OIDC, a.now); err != nil {
			return nil, err
		}
	}
	if len(a.tokens) == 0 && len(a.issuers) == 0 && a.oidc == nil {
		return nil, errors.New("no static token, trusted issuer or OIDC issuer: nobody could authenticate")
	}
	return a, nil
}

// FetchKeys fetches the OIDC issuer's key set, if any, now: so that a
// wrong URL shows at start rather than at the first token.
func (a *Authenticator) FetchKeys() error {
	if a.oidc == nil {
		return nil
	}
	return a.oidc.refresh()
}

// errUnauthorized is a missing or invalid token; its message never holds
// the token.
type errUnauthorized struct{ msg string }

func (e errUnauthorized) Error() string { return e.msg }

// Authenticate returns the principal of the request's bearer token. Its
// errors are for a 401; their text never holds the token.
func (a *Authenticator) Authenticate(r *http.Request) (*Principal, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return nil, errUnauthorized{"Bearer token required"}
	}
	// RFC 7235: the scheme, spaces, the credentials. Only the spaces and
	// tabs HTTP strips around a field value go, so a token matches only as
	// it was issued.
	scheme, tok, ok := strings.Cut(strings.TrimRight(h, " \t"), " ")
	tok = strings.TrimLeft(tok, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" {
		return nil, errUnauthorized{"malformed Authorization header: want Bearer <token>"}
	}
	if strings.Count(tok, ".") == 2 && (len(a.issuers) > 0 || a.oidc != nil) {
		return a.verifyBearerJWS(tok)
	}
	if p := a.tokens[sha256.Sum256([]byte(tok))]; p != nil {
		return p, nil
	}
	return nil, errUnauthorized{"invalid token"}
}

// verifyBearerJWS verifies a compact JWS bearer token: a Fluree JWS when
// its header embeds its key (jwk), else an OIDC token naming its key (kid).
func (a *Authenticator) verifyBearerJWS(tok string) (*Principal, error) {
	algs, names := []jose.SignatureAlgorithm{jose.EdDSA}, "EdDSA"
	if a.oidc != nil {
		algs, names = oidcAlgorithms, "RS256, ES256, EdDSA"
	}
	jws, err := jose.ParseSigned(tok, algs)
	if err != nil || len(jws.Signatures) != 1 {
		return nil, errUnauthorized{"malformed token: not a compact JWS signed with " + names}
	}
	h := jws.Signatures[0].Protected
	switch {
	case h.JSONWebKey != nil && len(a.issuers) > 0:
		return a.verifyJWS(jws)
	case h.JSONWebKey == nil && h.KeyID != "" && a.oidc != nil:
		return a.verifyOIDC(jws)
	case a.oidc == nil:
		return nil, errUnauthorized{"malformed token: the header must embed the signing key (jwk)"}
	}
	return nil, errUnauthorized{"malformed token: the header must embed the signing key (jwk) or name an OIDC issuer's key (kid)"}
}

// EventsAuth is how Fluree's events route authenticates its watchers, as
// Fluree's --events-auth-mode. Every other route always needs a token.
type EventsAuth int

const (
	// EventsAuthRequired needs a valid token; the watcher sees what its
	// token grants. The default.
	EventsAuthRequired EventsAuth = iota
	// EventsAuthOptional checks a token when one is given (an invalid one
	// gets 401) and filters by its grants; a watcher without one sees
	// every record. Not a security boundary.
	EventsAuthOptional
	// EventsAuthNone looks at no token: every watcher sees every record.
	EventsAuthNone
)

var eventsAuthNames = []string{"required", "optional", "none"}

func (m EventsAuth) String() string {
	if m < 0 || int(m) >= len(eventsAuthNames) {
		return fmt.Sprintf("EventsAuth(%d)", int(m))
	}
	return eventsAuthNames[m]
}

// ParseEventsAuth parses "required", "optional" or "none".
func ParseEventsAuth(s string) (EventsAuth, error) {
	if i := slices.Index(eventsAuthNames, s); i >= 0 {
		return EventsAuth(i), nil
	}
	return 0, fmt.Errorf("events auth %q: want required, optional or none", s)
}

// anonymousWatcher is a watcher without a token where the events route
// admits one: it sees every record's events and may do nothing else.
var anonymousWatcher = &Principal{Name: "anonymous", jws: true, eventsAll: true}

// Resolve returns the principal r acts for, by its bearer token checked by
// a (nil accepts none), refusing a token without a grant on r's route.
// events tells whether r is for Fluree's events route, which mode may open
// to watchers without a token. Its errors are for a 401 and never hold the
// token.
func Resolve(a *Authenticator, r *http.Request, events bool, mode EventsAuth) (*Principal, error) {
	if events {
		switch mode {
		case EventsAuthNone:
			return anonymousWatcher, nil
		case EventsAuthOptional:
			if r.Header.Get("Authorization") == "" {
				return anonymousWatcher, nil
			}
		}
	}
	if a == nil {
		return nil, errUnauthorized{"authentication is not configured"}
	}
	p, err := a.Authenticate(r)
	if err != nil {
		return nil, err
	}
	return p, p.grants(events)
}

type principalKey struct{}

// NewContext returns ctx carrying p, the principal of its request.
func NewContext(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the principal NewContext put in ctx, or nil for a
// request the server did not authenticate (a probe, the console's login).
func FromContext(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}
