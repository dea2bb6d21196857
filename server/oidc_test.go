package server_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"nameservice.dev/nameservice/server"
	"nameservice.dev/nameservice/server/auth"
)

// idp is an OIDC identity provider on a loopback listener: it publishes
// the public halves of its current signing keys as a JWKS, counting the
// fetches, and signs tokens with any key it ever had.
type idp struct {
	*httptest.Server
	issuer  string
	fetches atomic.Int32
	down    atomic.Bool
	clock   testClock // the server's: the key set's age is measured by it

	mu      sync.Mutex
	keys    map[string]jose.JSONWebKey // every key, by kid
	current []string                   // the kids published
}

func newIDP(t *testing.T) *idp {
	t.Helper()
	p := &idp{keys: map[string]jose.JSONWebKey{}}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		p.fetches.Add(1)
		if p.down.Load() {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		p.mu.Lock()
		var set jose.JSONWebKeySet
		for _, kid := range p.current {
			k := p.keys[kid]
			set.Keys = append(set.Keys, k.Public())
		}
		p.mu.Unlock()
		_ = json.NewEncoder(w).Encode(set)
	}))
	t.Cleanup(p.Close)
	p.issuer = "https://idp.example/" // a name only: iss is compared, never fetched
	return p
}

// testClock is a clock that stands still until advanced, from the time it
// was first read.
type testClock struct {
	mu    sync.Mutex
	start time.Time
	ahead time.Duration
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.start.IsZero() {
		c.start = time.Now()
	}
	return c.start.Add(c.ahead)
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ahead += d
}

// addKey makes a key of the given algorithm under kid.
func (p *idp) addKey(t *testing.T, kid string, alg jose.SignatureAlgorithm) {
	t.Helper()
	var priv crypto.Signer
	var err error
	switch alg {
	case jose.RS256:
		priv, err = rsa.GenerateKey(rand.Reader, 2048)
	case jose.ES256:
		priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case jose.EdDSA:
		_, priv, err = ed25519.GenerateKey(rand.Reader)
	}
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.keys[kid] = jose.JSONWebKey{Key: priv, KeyID: kid, Algorithm: string(alg), Use: "sig"}
}

// publish makes kids the published key set (a rotation).
func (p *idp) publish(kids ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.current = kids
}

// token signs claims with key kid, the kid in the header.
func (p *idp) token(t *testing.T, kid string, claims map[string]any) string {
	t.Helper()
	p.mu.Lock()
	k := p.keys[kid]
	p.mu.Unlock()
	b, _ := json.Marshal(claims)
	return SignCompact(t, jose.SigningKey{Algorithm: jose.SignatureAlgorithm(k.Algorithm), Key: k}, (&jose.SignerOptions{}).WithType("JWT"), b)
}

func (p *idp) claims(extra map[string]any) map[string]any {
	c := map[string]any{"iss": p.issuer, "sub": "user-1", "aud": []string{"nameservice"}, "exp": time.Now().Add(time.Hour).Unix(),
		"fluree.storage.ledgers": []string{"t1/db"}}
	for k, v := range extra {
		c[k] = v
	}
	return c
}

func oidcServer(t *testing.T, p *idp, cfg auth.OIDCConfig) *Server {
	t.Helper()
	cfg.Issuer, cfg.JWKSURL = p.issuer, p.URL+"/jwks.json"
	a, err := auth.NewAuthenticator(auth.Config{OIDC: &cfg, Now: p.clock.now})
	if err != nil {
		t.Fatal(err)
	}
	s := Start(t, server.Options{Auth: a})
	for _, name := range []string{"t1/db", "t2/db"} {
		Must(t, s.NS.Init(context.Background(), name))
	}
	return s
}

// lookupAs returns the status of a read of t1/db as token.
func lookupAs(t *testing.T, s *Server, token string) int {
	t.Helper()
	s.Token = token
	st, _ := s.Call(t, "GET", "/v1/fluree/storage/ns/t1%2Fdb:main", "")
	return st
}

// OIDC tokens are verified against the issuer's JWKS: RS256, ES256 and
// EdDSA keys; the set is cached (one fetch for many tokens), fetched again
// when a token names a kid it lacks (a rotation), at most once per
// MinRefresh however many such tokens come; a key rotated out is refused.
func TestOIDCJWKSRotation(t *testing.T) {
	p := newIDP(t)
	for kid, alg := range map[string]jose.SignatureAlgorithm{"rsa-1": jose.RS256, "ec-1": jose.ES256, "ed-1": jose.EdDSA, "rsa-2": jose.RS256, "ec-2": jose.ES256} {
		p.addKey(t, kid, alg)
	}
	p.publish("rsa-1", "ec-1", "ed-1")
	const minRefresh = 500 * time.Millisecond
	s := oidcServer(t, p, auth.OIDCConfig{Audience: "nameservice", CacheTTL: time.Hour, MinRefresh: minRefresh})
	for _, kid := range []string{"rsa-1", "ec-1", "ed-1", "rsa-1"} {
		if st := lookupAs(t, s, p.token(t, kid, p.claims(nil))); st != http.StatusOK {
			t.Fatalf("token of %s: %d", kid, st)
		}
	}
	if n := p.fetches.Load(); n != 1 {
		t.Fatalf("%d fetches for four tokens of a fresh set, want 1", n)
	}
	// The scope is the token's claims.
	s.Token = p.token(t, "rsa-1", p.claims(nil))
	if st, _ := s.Call(t, "GET", "/v1/fluree/storage/ns/t2%2Fdb:main", ""); st != http.StatusNotFound {
		t.Fatalf("out of the token's ledgers: %d, want 404", st)
	}

	p.clock.advance(minRefresh)
	p.publish("rsa-2", "ec-2")
	for _, kid := range []string{"rsa-2", "ec-2"} {
		if st := lookupAs(t, s, p.token(t, kid, p.claims(nil))); st != http.StatusOK {
			t.Fatalf("token of the new key %s: %d", kid, st)
		}
	}
	if n := p.fetches.Load(); n != 2 {
		t.Fatalf("%d fetches after the rotation, want 2", n)
	}
	// Tokens naming unknown kids, in a burst: one more fetch per
	// MinRefresh at most, and the clock stands still meanwhile.
	var toks []string
	for i := range 40 {
		toks = append(toks, p.token(t, []string{"rsa-1", "ec-1"}[i%2], p.claims(nil))) // rotated out
	}
	p.clock.advance(minRefresh)
	s.Token = ""
	var wg sync.WaitGroup
	for _, tok := range toks {
		wg.Go(func() {
			if st, _ := s.Call(t, "GET", "/v1/fluree/storage/ns/t1%2Fdb:main", "", "Authorization", "Bearer "+tok); st != http.StatusUnauthorized {
				t.Errorf("token of a key rotated out: %d, want 401", st)
			}
		})
	}
	wg.Wait()
	if n := p.fetches.Load(); n != 3 {
		t.Fatalf("%d fetches after 40 tokens of unknown kids within one MinRefresh, want 3", n)
	}
}

// What the OIDC path refuses.
func TestOIDCRefusals(t *testing.T) {
	p := newIDP(t)
	p.addKey(t, "rsa-1", jose.RS256)
	p.addKey(t, "ec-1", jose.ES256)
	p.addKey(t, "unpublished", jose.RS256)
	p.publish("rsa-1", "ec-1")
	s := oidcServer(t, p, auth.OIDCConfig{Audience: "nameservice"})
	rsaAsEC := jose.JSONWebKey{Key: p.keys["rsa-1"].Key, KeyID: "ec-1"}
	forged, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: rsaAsEC}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(p.claims(nil))
	jws, _ := forged.Sign(b)
	algMismatch, _ := jws.CompactSerialize()
	hmac, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: jose.JSONWebKey{Key: []byte("0123456789abcdef0123456789abcdef"), KeyID: "rsa-1"}}, nil)
	jws, _ = hmac.Sign(b)
	hs256, _ := jws.CompactSerialize()
	for name, tok := range map[string]string{
		"wrong issuer":        p.token(t, "rsa-1", p.claims(map[string]any{"iss": "https://other.example/"})),
		"wrong audience":      p.token(t, "rsa-1", p.claims(map[string]any{"aud": "someone-else"})),
		"no audience":         p.token(t, "rsa-1", p.claims(map[string]any{"aud": nil})),
		"expired":             p.token(t, "ec-1", p.claims(map[string]any{"exp": time.Now().Add(-time.Hour).Unix()})),
		"nbf 2^63-1":          p.token(t, "ec-1", p.claims(map[string]any{"nbf": int64(1<<63 - 1)})),
		"no storage claims":   p.token(t, "rsa-1", p.claims(map[string]any{"fluree.storage.ledgers": nil})),
		"unpublished key":     p.token(t, "unpublished", p.claims(nil)),
		"RS256 on an EC kid":  algMismatch,
		"HS256":               hs256,
		"did:key JWS, no did": NewIssuer(t).Token(t, map[string]any{"iss": "x", "exp": time.Now().Add(time.Hour).Unix(), "fluree.storage.all": true}),
	} {
		if st := lookupAs(t, s, tok); st != http.StatusUnauthorized {
			t.Errorf("%s: %d, want 401", name, st)
		}
	}
	if st := lookupAs(t, s, p.token(t, "ec-1", p.claims(map[string]any{"aud": "nameservice"}))); st != http.StatusOK {
		t.Errorf("aud as one string: %d, want 200", st)
	}
}

// The set is fetched again once older than CacheTTL; when that fetch
// fails, the keys held are still used.
func TestOIDCCacheTTL(t *testing.T) {
	p := newIDP(t)
	p.addKey(t, "k", jose.ES256)
	p.publish("k")
	const ttl = time.Second
	s := oidcServer(t, p, auth.OIDCConfig{CacheTTL: ttl, MinRefresh: 50 * time.Millisecond})
	tok := p.token(t, "k", p.claims(nil))
	for range 3 {
		if st := lookupAs(t, s, tok); st != http.StatusOK {
			t.Fatalf("lookup: %d", st)
		}
	}
	p.clock.advance(ttl)
	if st := lookupAs(t, s, tok); st != http.StatusOK || p.fetches.Load() != 2 {
		t.Fatalf("after the TTL: %d with %d fetches, want 200 with 2", st, p.fetches.Load())
	}
	p.down.Store(true)
	p.clock.advance(ttl)
	if st := lookupAs(t, s, tok); st != http.StatusOK || p.fetches.Load() != 3 {
		t.Fatalf("with the JWKS down: %d with %d fetches, want 200 (the held keys) with 3", st, p.fetches.Load())
	}
}

// A JWKS URL an attacker on the path could answer is refused.
func TestOIDCConfigRefused(t *testing.T) {
	for _, u := range []string{"http://idp.example/jwks.json", "ftp://127.0.0.1/jwks", "https:///jwks", "::"} {
		_, err := auth.NewAuthenticator(auth.Config{OIDC: &auth.OIDCConfig{Issuer: "https://idp.example/", JWKSURL: u}})
		if err == nil {
			t.Errorf("JWKS URL %q accepted", u)
		}
	}
	if _, err := auth.NewAuthenticator(auth.Config{OIDC: &auth.OIDCConfig{JWKSURL: "https://idp.example/jwks.json"}}); err == nil {
		t.Error("an OIDC configuration without an issuer accepted")
	}
}
