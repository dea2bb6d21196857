package auth

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
)

// FuzzParseJWKS feeds arbitrary key sets (they come over the network from
// the OIDC issuer): never a panic, and every key kept is a public signature
// key of a usable algorithm, under its own kid.
func FuzzParseJWKS(f *testing.F) {
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ec384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	edPub, _, _ := ed25519.GenerateKey(rand.Reader)
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
		{Key: &rsaKey.PublicKey, KeyID: "r", Algorithm: "RS256", Use: "sig"},
		{Key: &ecKey.PublicKey, KeyID: "e"},
		{Key: edPub, KeyID: "d", Algorithm: "EdDSA"},
		{Key: &ec384.PublicKey, KeyID: "p384"},
		{Key: rsaKey, KeyID: "private"},
		{Key: []byte("0123456789abcdef"), KeyID: "oct"},
	}}
	b, err := json.Marshal(set)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(`{"keys":[{"kty":"oct","kid":"h","k":"AAAA"}]}`))
	f.Add([]byte(`{"keys":[{"kty":"RSA","kid":"r","n":"AQAB","e":"AQAB"}]}`))
	f.Add([]byte(`{"keys":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		keys, err := parseJWKS(b)
		if err != nil {
			if keys != nil {
				t.Fatalf("%q: keys with an error", b)
			}
			return
		}
		if len(keys) == 0 {
			t.Fatalf("%q: no key and no error", b)
		}
		for kid, k := range keys {
			if kid == "" || kid != k.KeyID || !k.IsPublic() || keyAlgorithm(k.Key) == "" ||
				(k.Algorithm != "" && k.Algorithm != string(keyAlgorithm(k.Key))) || (k.Use != "" && k.Use != "sig") {
				t.Fatalf("%q: kept key %q: %T alg %q use %q", b, kid, k.Key, k.Algorithm, k.Use)
			}
		}
	})
}
