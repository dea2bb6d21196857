package testenv

import (
	"crypto/sha256"
	"encoding/base32"
	"strings"
)

// CID returns a content ID as Fluree writes them (CIDv1, dag-cbor,
// sha2-256, multibase base32 lower case), derived from seed: equal seeds,
// equal IDs.
func CID(seed string) string {
	sum := sha256.Sum256([]byte(seed))
	b := append([]byte{0x01, 0x71, 0x12, 0x20}, sum[:]...)
	return "b" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
}
