package auth

import (
	"cmp"
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"golang.org/x/sync/singleflight"

	"nameservice.dev/nameservice/internal/driverutil"
)

// Defaults of OIDCConfig.
const (
	DefaultJWKSCacheTTL    = 5 * time.Minute
	DefaultJWKSMinRefresh  = 10 * time.Second
	jwksFetchTimeout       = 10 * time.Second
	maxJWKSBytes           = 1 << 20
	minRSABits, maxRSABits = 2048, 8192
)

// oidcAlgorithms are the signature algorithms of OIDC tokens: RS256, ES256
// and EdDSA. Never a symmetric one: the keys are public.
var oidcAlgorithms = []jose.SignatureAlgorithm{jose.RS256, jose.ES256, jose.EdDSA}

// OIDCConfig configures the verification of OIDC bearer tokens: JWTs signed
// with keys the provider publishes as a JWKS, naming their key by kid, with
// the same Fluree claims as a did:key JWS and iss exactly Issuer.
type OIDCConfig struct {
	// Issuer is the iss every token must carry.
	Issuer string
	// JWKSURL is where the provider publishes its keys: an https URL, or
	// http to a loopback host.
	JWKSURL string
	// Audience, when set, must be among a token's aud.
	Audience string
	// CacheTTL is how long a fetched key set is used before it is fetched
	// again (default 5m); one that cannot be fetched again is kept.
	CacheTTL time.Duration
	// MinRefresh is the least time between two fetches (default 10s), as
	// when a token names a kid the set lacks (a rotated key).
	MinRefresh time.Duration
	// Client fetches the key set; nil: a client with a 10s timeout.
	Client *http.Client
	// Logger receives a warning when a fetch fails; nil discards.
	Logger *slog.Logger
}

// jwks is the cached key set of an OIDC issuer.
type jwks struct {
	cfg    OIDCConfig
	client *http.Client
	group  singleflight.Group
	now    func() time.Time // the Authenticator's clock

	mu      sync.Mutex
	keys    map[string]jose.JSONWebKey // by kid
	fetched time.Time                  // of the keys
	tried   time.Time                  // the last fetch, failed or not
}

func newJWKS(cfg OIDCConfig, now func() time.Time) (*jwks, error) {
	if cfg.Issuer == "" {
		return nil, errors.New("OIDC: an issuer is required")
	}
	if err := checkJWKSURL(cfg.JWKSURL); err != nil {
		return nil, fmt.Errorf("OIDC: JWKS URL: %w", err)
	}
	cfg.CacheTTL = driverutil.Positive(cfg.CacheTTL, DefaultJWKSCacheTTL)
	cfg.MinRefresh = driverutil.Positive(cfg.MinRefresh, DefaultJWKSMinRefresh)
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	client := cmp.Or(cfg.Client, &http.Client{Timeout: jwksFetchTimeout})
	c := *client
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("too many redirects")
		}
		return checkJWKSURL(req.URL.String())
	}
	return &jwks{cfg: cfg, client: &c, now: now}, nil
}

// checkJWKSURL refuses a key set URL whose keys an attacker on the path
// could replace: anything but https, or http to a loopback host.
func checkJWKSURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return err
	case u.Scheme == "https" && u.Host != "":
		return nil
	case u.Scheme == "http":
		if ip := net.ParseIP(u.Hostname()); (ip != nil && ip.IsLoopback()) || u.Hostname() == "localhost" {
			return nil
		}
	}
	return fmt.Errorf("%q: want an https URL (http only to a loopback host)", raw)
}

// key returns the key named kid, fetching the set when it is older than
// CacheTTL or lacks kid (at most once per MinRefresh, one fetch at a time).
// When a fetch fails the keys already held are used.
func (j *jwks) key(kid string) (jose.JSONWebKey, error) {
	j.mu.Lock()
	k, ok := j.keys[kid]
	fresh := j.now().Sub(j.fetched) < j.cfg.CacheTTL
	mayFetch := j.now().Sub(j.tried) >= j.cfg.MinRefresh
	j.mu.Unlock()
	if !(ok && fresh) && mayFetch {
		_, err, _ := j.group.Do("", func() (any, error) { return nil, j.refresh() })
		if err != nil {
			j.cfg.Logger.Warn("cannot fetch the OIDC issuer's keys", slog.String("jwks_url", j.cfg.JWKSURL), slog.String("error", err.Error()))
		}
		j.mu.Lock()
		k, ok = j.keys[kid]
		j.mu.Unlock()
	}
	if !ok {
		return k, fmt.Errorf("no key %q in the issuer's key set", kid)
	}
	return k, nil
}

// refresh replaces the keys held by the fetched set, if it has a usable key.
func (j *jwks) refresh() error {
	j.mu.Lock()
	if j.now().Sub(j.tried) < j.cfg.MinRefresh {
		j.mu.Unlock()
		return nil // fetched by another caller meanwhile
	}
	j.tried = j.now()
	j.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), jwksFetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, j.cfg.JWKSURL, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := j.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", j.cfg.JWKSURL, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return fmt.Errorf("GET %s: %w", j.cfg.JWKSURL, err)
	}
	if len(b) > maxJWKSBytes {
		return fmt.Errorf("GET %s: key set larger than %d bytes", j.cfg.JWKSURL, maxJWKSBytes)
	}
	keys, err := parseJWKS(b)
	if err != nil {
		return fmt.Errorf("GET %s: %w", j.cfg.JWKSURL, err)
	}
	j.mu.Lock()
	j.keys, j.fetched = keys, j.now()
	j.mu.Unlock()
	return nil
}

// parseJWKS returns the signature keys of a JWKS by kid. As RFC 7517 asks,
// a key it cannot use is skipped: one without a kid, not for signatures,
// symmetric (an "oct" key would let anyone who read the set sign), an RSA
// key under 2048 or over 8192 bits, an EC key off P-256, or one whose alg
// is not RS256, ES256 or EdDSA. A set with no usable key is an error.
func parseJWKS(b []byte) (map[string]jose.JSONWebKey, error) {
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(b, &set); err != nil {
		return nil, fmt.Errorf("not a JWKS: %v", err)
	}
	keys := map[string]jose.JSONWebKey{}
	for _, raw := range set.Keys {
		var k jose.JSONWebKey
		if k.UnmarshalJSON(raw) != nil || k.KeyID == "" || (k.Use != "" && k.Use != "sig") {
			continue
		}
		if _, dup := keys[k.KeyID]; dup || keyAlgorithm(k.Key) == "" {
			continue
		}
		if k.Algorithm != "" && k.Algorithm != string(keyAlgorithm(k.Key)) {
			continue
		}
		keys[k.KeyID] = k
	}
	if len(keys) == 0 {
		return nil, errors.New("the key set holds no usable signature key (RS256, ES256 or EdDSA, with a kid)")
	}
	return keys, nil
}

// keyAlgorithm returns the one algorithm a public key verifies, or "" for
// a key that is not usable.
func keyAlgorithm(key any) jose.SignatureAlgorithm {
	switch k := key.(type) {
	case *rsa.PublicKey:
		if n := k.N.BitLen(); n >= minRSABits && n <= maxRSABits {
			return jose.RS256
		}
	case *ecdsa.PublicKey:
		if k.Curve == elliptic.P256() {
			return jose.ES256
		}
	case ed25519.PublicKey:
		if len(k) == ed25519.PublicKeySize {
			return jose.EdDSA
		}
	}
	return ""
}

// verifyOIDC verifies a token signed by the OIDC issuer's key kid, of the
// key's alg, from the issuer, for the audience if one is set, in time.
func (a *Authenticator) verifyOIDC(jws *jose.JSONWebSignature) (*Principal, error) {
	h := jws.Signatures[0].Protected
	key, err := a.oidc.key(h.KeyID)
	if err != nil {
		return nil, errUnauthorized{"invalid token: " + err.Error()}
	}
	if h.Algorithm != string(keyAlgorithm(key.Key)) {
		return nil, errUnauthorized{"invalid token: its alg " + h.Algorithm + " is not its key's"}
	}
	payload, err := jws.Verify(key)
	if err != nil {
		return nil, errUnauthorized{"invalid token signature"}
	}
	c, err := parseClaims(payload)
	if err != nil {
		return nil, err
	}
	cfg := a.oidc.cfg
	if c.Iss != cfg.Issuer {
		return nil, errUnauthorized{"token iss is not the OIDC issuer"}
	}
	if cfg.Audience != "" && !slices.Contains(c.Aud, cfg.Audience) {
		return nil, errUnauthorized{"token aud does not hold " + cfg.Audience}
	}
	if err := c.checkTimes(a.now()); err != nil {
		return nil, err
	}
	return c.principal(cmp.Or(c.identity(), c.Iss)), nil
}
