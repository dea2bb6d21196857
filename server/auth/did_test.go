package auth

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"testing"
)

// The did:key of a known Ed25519 key, as Fluree derives it
// (fluree-db-credential did.rs test vector).
func TestDIDKeyVector(t *testing.T) {
	pub, _ := hex.DecodeString("a8def12ad736f8840f836a46c66c9f3e2015d1ea2c69d546c050fef746bd63b3")
	const want = "did:key:z6MkqpTi7zUDy5nnSfpLf7SPGsepMNJAxRiH1jbCZbuaZoEz"
	if got := DIDKey(ed25519.PublicKey(pub)); got != want {
		t.Fatalf("DIDKey = %s, want %s", got, want)
	}
	back, err := pubKeyFromDID(want)
	if err != nil || !bytes.Equal(back, pub) {
		t.Fatalf("pubKeyFromDID = %x, %v", back, err)
	}
	for _, bad := range []string{"did:key:z", "did:key:z0OIl", "did:web:x", "did:key:z6Mk"} {
		if _, err := pubKeyFromDID(bad); err == nil {
			t.Errorf("pubKeyFromDID(%q) accepted", bad)
		}
	}
}
