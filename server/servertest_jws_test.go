package server_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"maps"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"nameservice.dev/nameservice/server/auth"
)

// Issuer is an Ed25519 key that signs Fluree-style tokens.
type Issuer struct {
	Priv ed25519.PrivateKey
	DID  string
}

// NewIssuer returns a new key.
func NewIssuer(t testing.TB) Issuer {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	Must(t, err)
	return Issuer{Priv: priv, DID: auth.DIDKey(pub)}
}

// Token signs claims as a compact JWS with the public key embedded in the
// header, as Fluree's tokens are.
func (is Issuer) Token(t testing.TB, claims map[string]any) string {
	t.Helper()
	b, _ := json.Marshal(claims)
	return is.RawToken(t, string(b))
}

// Claims are the claims of a token of is valid for an hour, with extra.
func (is Issuer) Claims(extra map[string]any) map[string]any {
	c := map[string]any{"iss": is.DID, "exp": time.Now().Add(time.Hour).Unix()}
	maps.Copy(c, extra)
	return c
}

// RawToken signs payload as it is (a map cannot hold a repeated name).
func (is Issuer) RawToken(t testing.TB, payload string) string {
	t.Helper()
	return SignCompact(t, jose.SigningKey{Algorithm: jose.EdDSA, Key: is.Priv}, (&jose.SignerOptions{EmbedJWK: true}), []byte(payload))
}

// SignCompact signs payload with key and returns the JWS in compact form.
func SignCompact(t testing.TB, key jose.SigningKey, opts *jose.SignerOptions, payload []byte) string {
	t.Helper()
	signer, err := jose.NewSigner(key, opts)
	Must(t, err)
	jws, err := signer.Sign(payload)
	Must(t, err)
	s, err := jws.CompactSerialize()
	Must(t, err)
	return s
}
