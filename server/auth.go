package server

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"nameservice.dev/nameservice/driver"
)

// Principal is who a request acts for, and what it may touch.
type Principal struct {
	// Name identifies the principal in logs: a static token's name or a
	// JWS issuer. Never the token.
	Name string
	// Read and Write are the ID prefixes the principal may read and write;
	// "" covers every ID.
	Read, Write []string
	// Admin are the ID prefixes on which the principal may run
	// administrator operations (reset-head); only static tokens have any.
	Admin []string
	// Exact IDs the principal may read and write (Fluree's
	// fluree.storage.ledgers), normalised.
	Exact map[string]bool
	// Fluree's events claims, for /v1/fluree/events. A static token's
	// events scope is its read scope.
	eventsAll      bool
	eventsLedgers  map[string]bool
	eventsGSources map[string]bool
	jws            bool
	// storageAll is Fluree's fluree.storage.all (or an unrestricted read).
	storageAll bool
}

func covers(prefixes []string, id string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(id, p) {
			return true
		}
	}
	return false
}

// CanRead reports whether p may read record id (normalised).
func (p *Principal) CanRead(id string) bool { return covers(p.Read, id) || p.Exact[id] }

// CanWrite reports whether p may write record id (normalised).
func (p *Principal) CanWrite(id string) bool { return covers(p.Write, id) || p.Exact[id] }

// CanAdmin reports whether p may run administrator operations on record id
// (normalised).
func (p *Principal) CanAdmin(id string) bool { return covers(p.Admin, id) }

// readsAll reports whether p may read every record.
func (p *Principal) readsAll() bool { return slices.Contains(p.Read, "") }

// canEvent reports whether p may see events of a record of kind k.
func (p *Principal) canEvent(k driver.Kind, id string) bool {
	if !p.jws {
		return p.CanRead(id)
	}
	if p.eventsAll {
		return true
	}
	if k == driver.GraphSource {
		return p.eventsGSources[id]
	}
	return p.eventsLedgers[id]
}

var allRights = &Principal{Name: "anonymous (no auth)", Read: []string{""}, Write: []string{""}, Admin: []string{""}, storageAll: true}

// Authenticator verifies bearer tokens: static tokens (stored as SHA-256
// hashes) and Ed25519 JWS from trusted did:key issuers carrying Fluree's
// claims.
type Authenticator struct {
	tokens  map[[32]byte]*Principal
	issuers map[string]bool
	now     func() time.Time
}

// TokenFile is the JSON file of static tokens:
//
//	{"tokens": [{"name": "indexer", "sha256": "<hex of SHA-256 of the token>",
//	             "read": ["tenant/"], "write": ["tenant/"], "admin": []}]}
//
// read, write and admin are ID prefixes; "" covers every ID. admin allows
// the administrator operations (reset-head); it is usually left out.
type TokenFile struct {
	Tokens []TokenEntry `json:"tokens"`
}

// TokenEntry is one static token.
type TokenEntry struct {
	Name   string   `json:"name"`
	SHA256 string   `json:"sha256"`
	Read   []string `json:"read"`
	Write  []string `json:"write"`
	Admin  []string `json:"admin,omitempty"`
}

// AuthConfig configures NewAuthenticator.
type AuthConfig struct {
	Tokens         []TokenEntry
	TrustedIssuers []string // did:key identifiers
	Now            func() time.Time
}

// NewAuthenticator checks cfg and returns an authenticator. It returns an
// error naming the entry when a hash is not 64 hex digits, a name is
// missing or repeated, or an issuer is not an Ed25519 did:key.
func NewAuthenticator(cfg AuthConfig) (*Authenticator, error) {
	a := &Authenticator{tokens: map[[32]byte]*Principal{}, issuers: map[string]bool{}, now: cfg.Now}
	if a.now == nil {
		a.now = time.Now
	}
	names := map[string]bool{}
	for i, t := range cfg.Tokens {
		if t.Name == "" || names[t.Name] {
			return nil, fmt.Errorf("token %d: a unique name is required", i+1)
		}
		names[t.Name] = true
		raw, err := hex.DecodeString(t.SHA256)
		if err != nil || len(raw) != sha256.Size {
			return nil, fmt.Errorf("token %q: sha256 must be 64 hex digits (the SHA-256 of the token)", t.Name)
		}
		var h [32]byte
		copy(h[:], raw)
		a.tokens[h] = &Principal{Name: t.Name, Read: slices.Clone(t.Read), Write: slices.Clone(t.Write), Admin: slices.Clone(t.Admin),
			storageAll: slices.Contains(t.Read, "")}
	}
	for _, iss := range cfg.TrustedIssuers {
		if _, err := pubKeyFromDID(iss); err != nil {
			return nil, fmt.Errorf("trusted issuer %q: %w", iss, err)
		}
		a.issuers[iss] = true
	}
	if len(a.tokens) == 0 && len(a.issuers) == 0 {
		return nil, errors.New("no static token and no trusted issuer: nobody could authenticate")
	}
	return a, nil
}

// LoadTokenFile reads a TokenFile.
func LoadTokenFile(path string) ([]TokenEntry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	var f TokenFile
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("token file %s: %v", path, err)
	}
	return f.Tokens, nil
}

// HashToken returns the hex SHA-256 of a token, as a token file stores it.
func HashToken(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// errUnauthorized is a missing or invalid token; its message never holds
// the token.
type errUnauthorized struct{ msg string }

func (e errUnauthorized) Error() string { return e.msg }

// Authenticate returns the principal of the request's bearer token.
func (a *Authenticator) Authenticate(r *http.Request) (*Principal, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return nil, errUnauthorized{"Bearer token required"}
	}
	// RFC 7235: the scheme, one or more spaces, the credentials; HTTP
	// strips spaces and tabs around a field value (a handler called
	// directly may still see them). Nothing else around the token is
	// removed, so a token matches only as it was issued.
	scheme, tok, ok := strings.Cut(strings.TrimRight(h, " \t"), " ")
	tok = strings.TrimLeft(tok, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" {
		return nil, errUnauthorized{"malformed Authorization header: want Bearer <token>"}
	}
	if strings.Count(tok, ".") == 2 && len(a.issuers) > 0 {
		return a.verifyJWS(tok)
	}
	if p := a.tokens[sha256.Sum256([]byte(tok))]; p != nil {
		return p, nil
	}
	return nil, errUnauthorized{"invalid token"}
}

// flureeClaims are the claims of a Fluree JWS that matter here.
type flureeClaims struct {
	Iss            string   `json:"iss"`
	Sub            string   `json:"sub"`
	Exp            *int64   `json:"exp"`
	Nbf            *int64   `json:"nbf"`
	Iat            *int64   `json:"iat"`
	StorageAll     bool     `json:"fluree.storage.all"`
	StorageLedgers []string `json:"fluree.storage.ledgers"`
	EventsAll      bool     `json:"fluree.events.all"`
	EventsLedgers  []string `json:"fluree.events.ledgers"`
	EventsGSources []string `json:"fluree.events.graph_sources"`
}

// clockSkew is the leeway Fluree allows on exp, nbf and iat.
const clockSkew = 60 * time.Second

func (a *Authenticator) verifyJWS(tok string) (*Principal, error) {
	jws, err := jose.ParseSigned(tok, []jose.SignatureAlgorithm{jose.EdDSA})
	if err != nil {
		return nil, errUnauthorized{"malformed token: not a compact JWS signed with EdDSA"}
	}
	if len(jws.Signatures) != 1 || jws.Signatures[0].Protected.JSONWebKey == nil {
		return nil, errUnauthorized{"malformed token: the header must embed the signing key (jwk)"}
	}
	pub, ok := jws.Signatures[0].Protected.JSONWebKey.Key.(ed25519.PublicKey)
	if !ok {
		return nil, errUnauthorized{"malformed token: the embedded key is not an Ed25519 key"}
	}
	payload, err := jws.Verify(pub)
	if err != nil {
		return nil, errUnauthorized{"invalid token signature"}
	}
	did := didFromPubKey(pub)
	if !a.issuers[did] {
		return nil, errUnauthorized{"token issuer is not trusted"}
	}
	var c flureeClaims
	if err := json.Unmarshal(payload, &c); err != nil {
		return nil, errUnauthorized{"malformed token claims"}
	}
	if c.Iss != did {
		return nil, errUnauthorized{"token iss does not match its signing key"}
	}
	now := a.now()
	switch {
	case c.Exp == nil:
		return nil, errUnauthorized{"token has no exp"}
	case time.Unix(*c.Exp, 0).Add(clockSkew).Before(now):
		return nil, errUnauthorized{"token expired"}
	case c.Nbf != nil && time.Unix(*c.Nbf, 0).After(now.Add(clockSkew)):
		return nil, errUnauthorized{"token not yet valid (nbf)"}
	case c.Iat != nil && time.Unix(*c.Iat, 0).After(now.Add(clockSkew)):
		return nil, errUnauthorized{"token issued in the future (iat)"}
	}
	p := &Principal{Name: did, Exact: normalisedSet(c.StorageLedgers), storageAll: c.StorageAll,
		jws: true, eventsAll: c.EventsAll,
		eventsLedgers: normalisedSet(c.EventsLedgers), eventsGSources: normalisedSet(c.EventsGSources)}
	if c.StorageAll {
		p.Read, p.Write = []string{""}, []string{""}
	}
	return p, nil
}

func normalisedSet(ids []string) map[string]bool {
	m := map[string]bool{}
	for _, s := range ids {
		if id, err := driver.ParseID(s); err == nil {
			m[id.String()] = true
		}
	}
	return m
}

// reqInfo is what the server learns about a request while serving it.
type reqInfo struct{ principal *Principal }

type reqInfoKey struct{}

func (ri *reqInfo) name() string {
	if ri.principal == nil {
		return ""
	}
	return ri.principal.Name
}

func principalOf(ctx context.Context) *Principal {
	if ri, ok := ctx.Value(reqInfoKey{}).(*reqInfo); ok && ri.principal != nil {
		return ri.principal
	}
	return nil
}

func principalName(ctx context.Context) string {
	if p := principalOf(ctx); p != nil {
		return p.Name
	}
	return ""
}

// auth wraps h with authentication: 401 without a valid token.
func (s *Server) auth(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ri, _ := r.Context().Value(reqInfoKey{}).(*reqInfo)
		if ri == nil {
			ri = &reqInfo{}
			r = r.WithContext(context.WithValue(r.Context(), reqInfoKey{}, ri))
		}
		switch {
		case s.opts.NoAuth:
			ri.principal = allRights
		case s.opts.Auth == nil:
			s.unauthorized(w, r, errUnauthorized{"authentication is not configured"})
			return
		default:
			p, err := s.opts.Auth.Authenticate(r)
			if err != nil {
				s.unauthorized(w, r, err)
				return
			}
			ri.principal = p
		}
		h(w, r)
	}
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
