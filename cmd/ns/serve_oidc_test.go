package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// ns serve --oidc-issuer --jwks-url verifies OIDC tokens (RS256, ES256)
// against a JWKS on a loopback listener, fetched once at start and cached.
func TestServeOIDC(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	keys := []jose.JSONWebKey{
		{Key: rsaKey, KeyID: "rsa-1", Algorithm: string(jose.RS256)},
		{Key: ecKey, KeyID: "ec-1", Algorithm: string(jose.ES256)},
	}
	var fetches atomic.Int32
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fetches.Add(1)
		var set jose.JSONWebKeySet
		for _, k := range keys {
			set.Keys = append(set.Keys, k.Public())
		}
		_ = json.NewEncoder(w).Encode(set)
	}))
	defer jwks.Close()
	const issuer = "https://login.example/tenant/"
	sign := func(k jose.JSONWebKey, aud string) string {
		signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.SignatureAlgorithm(k.Algorithm), Key: k}, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(map[string]any{"iss": issuer, "sub": "indexer", "aud": aud,
			"exp": time.Now().Add(time.Hour).Unix(), "fluree.storage.all": true})
		jws, err := signer.Sign(b)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := jws.CompactSerialize()
		return s
	}
	p := startServe(t, buildNS(t), "mem://oidc", "--oidc-issuer", issuer, "--jwks-url", jwks.URL+"/keys", "--oidc-audience", "nameservice")
	if n := fetches.Load(); n != 1 {
		t.Fatalf("%d fetches of the key set at start, want 1", n)
	}
	call := func(method, path, token string) int {
		req, _ := http.NewRequest(method, p.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := call("POST", "/v1/fluree/nameservice/refs/db:main/init", sign(keys[0], "nameservice")); st != http.StatusOK {
		t.Fatalf("init with an RS256 token: %d", st)
	}
	if st := call("GET", "/v1/fluree/storage/ns/db:main", sign(keys[1], "nameservice")); st != http.StatusOK {
		t.Fatalf("lookup with an ES256 token: %d", st)
	}
	if st := call("GET", "/v1/fluree/storage/ns/db:main", sign(keys[1], "another-service")); st != http.StatusUnauthorized {
		t.Fatalf("a token for another audience: %d, want 401", st)
	}
	if n := fetches.Load(); n != 1 {
		t.Fatalf("%d fetches of the key set, want 1 (cached)", n)
	}
	stopServe(t, p)
	if strings.Contains(p.Stderr.String(), sign(keys[0], "nameservice")[:40]) {
		t.Fatal("the server logged a token")
	}
}
