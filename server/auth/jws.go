package auth

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"slices"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	josejson "github.com/go-jose/go-jose/v4/json"
	"github.com/mr-tron/base58"

	"nameservice.dev/nameservice/model"
)

// tokenClaims are the claims of a JWS bearer token that matter here:
// Fluree's EventsTokenPayload. Times are unsigned, as Fluree's u64.
type tokenClaims struct {
	Iss            string   `json:"iss"`
	Sub            *string  `json:"sub"`
	Identity       *string  `json:"fluree.identity"`
	Aud            audience `json:"aud"`
	Exp            *uint64  `json:"exp"`
	Nbf            *uint64  `json:"nbf"`
	Iat            *uint64  `json:"iat"`
	StorageAll     bool     `json:"fluree.storage.all"`
	StorageLedgers []string `json:"fluree.storage.ledgers"`
	EventsAll      bool     `json:"fluree.events.all"`
	EventsLedgers  []string `json:"fluree.events.ledgers"`
	EventsGSources []string `json:"fluree.events.graph_sources"`
}

// audience is the aud claim: one string or an array of them.
type audience []string

func (a *audience) UnmarshalJSON(b []byte) error {
	var one string
	if josejson.Unmarshal(b, &one) == nil {
		*a = audience{one}
		return nil
	}
	return josejson.Unmarshal(b, (*[]string)(a))
}

// parseClaims decodes a verified JWS payload as serde decodes Fluree's
// claims: unknown names ignored, names matched exactly and never repeated
// (go-jose's JSON: with encoding/json, "Fluree.Storage.All" or a second
// "exp" could change what a token grants).
func parseClaims(payload []byte) (*tokenClaims, error) {
	var c tokenClaims
	if err := josejson.Unmarshal(payload, &c); err != nil {
		return nil, errUnauthorized{"malformed token claims: " + err.Error()}
	}
	return &c, nil
}

// clockSkew is the leeway Fluree allows on exp, nbf and iat.
const clockSkew = 60 * time.Second

// checkTimes enforces exp (required), nbf and iat with Fluree's skew, in
// integer seconds, which a huge value cannot overflow.
func (c *tokenClaims) checkTimes(now time.Time) error {
	n, skew := uint64(max(now.Unix(), 0)), uint64(clockSkew/time.Second)
	switch {
	case c.Exp == nil:
		return errUnauthorized{"token has no exp"}
	case *c.Exp < n && n-*c.Exp > skew:
		return errUnauthorized{"token expired"}
	case c.Nbf != nil && *c.Nbf > n+skew:
		return errUnauthorized{"token not yet valid (nbf)"}
	case c.Iat != nil && *c.Iat > n+skew:
		return errUnauthorized{"token issued in the future (iat)"}
	}
	return nil
}

// identity is who the token speaks for: fluree.identity, else sub.
func (c *tokenClaims) identity() string {
	switch {
	case c.Identity != nil:
		return *c.Identity
	case c.Sub != nil:
		return *c.Sub
	}
	return ""
}

// principal returns the principal the claims describe, named name.
func (c *tokenClaims) principal(name string) *Principal {
	p := &Principal{Name: name, Exact: normalisedSet(c.StorageLedgers), storageAll: c.StorageAll,
		jws: true, eventsAll: c.EventsAll,
		events: map[model.Kind]map[string]bool{
			model.Ledger: normalisedSet(c.EventsLedgers), model.GraphSource: normalisedSet(c.EventsGSources)},
		key: "jws:" + c.Iss + "\x00" + c.identity()}
	if c.StorageAll {
		p.Read, p.Write = []string{""}, []string{""}
	}
	return p
}

// verifyJWS verifies a Fluree JWS: signed with Ed25519, the key embedded
// in the header, its did:key trusted and equal to iss.
func (a *Authenticator) verifyJWS(jws *jose.JSONWebSignature) (*Principal, error) {
	pub, ok := jws.Signatures[0].Protected.JSONWebKey.Key.(ed25519.PublicKey)
	if !ok || jws.Signatures[0].Protected.Algorithm != string(jose.EdDSA) {
		return nil, errUnauthorized{"malformed token: the embedded key is not an Ed25519 key"}
	}
	payload, err := jws.Verify(pub)
	if err != nil {
		return nil, errUnauthorized{"invalid token signature"}
	}
	did := DIDKey(pub)
	if !a.issuers[did] {
		return nil, errUnauthorized{"token issuer is not trusted"}
	}
	c, err := parseClaims(payload)
	if err != nil {
		return nil, err
	}
	if c.Iss != did {
		return nil, errUnauthorized{"token iss does not match its signing key"}
	}
	if err := c.checkTimes(a.now()); err != nil {
		return nil, err
	}
	return c.principal(did), nil
}

func normalisedSet(ids []string) map[string]bool {
	m := map[string]bool{}
	for _, s := range ids {
		if id, err := model.ParseID(s); err == nil {
			m[id.String()] = true
		}
	}
	return m
}

// An Ed25519 did:key is "did:key:z" + base58btc(0xed 0x01 ‖ public key):
// the multicodec prefix of an Ed25519 public key, in multibase base58btc.
const didKeyPrefix = "did:key:z"

var ed25519Multicodec = []byte{0xed, 0x01}

const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

// DIDKey returns the did:key of an Ed25519 public key, as a trusted issuer
// is listed.
func DIDKey(pub ed25519.PublicKey) string {
	return didKeyPrefix + base58.Encode(append(slices.Clone(ed25519Multicodec), pub...))
}

func pubKeyFromDID(did string) (ed25519.PublicKey, error) {
	rest, ok := strings.CutPrefix(did, didKeyPrefix)
	switch {
	case !ok:
		return nil, errors.New("not a did:key in base58btc (did:key:z...)")
	case rest == "" || len(rest) > 128:
		return nil, errors.New("base58 text empty or too long")
	case strings.Trim(rest, base58Alphabet) != "":
		return nil, errors.New("not base58btc")
	}
	b, err := base58.Decode(rest)
	if err != nil || len(b) != 2+ed25519.PublicKeySize || !bytes.HasPrefix(b, ed25519Multicodec) {
		return nil, errors.New("not an Ed25519 did:key (want the 0xed01 multicodec and 32 key bytes)")
	}
	return ed25519.PublicKey(b[2:]), nil
}
