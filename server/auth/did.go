package auth

import (
	"crypto/ed25519"
	"errors"
	"math/big"
	"slices"
	"strings"
)

// An Ed25519 did:key is "did:key:z" + base58btc(0xed 0x01 ‖ public key):
// the multicodec prefix of an Ed25519 public key, in multibase base58btc.
const didKeyPrefix = "did:key:z"

var ed25519Multicodec = []byte{0xed, 0x01}

const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

// DIDKey returns the did:key of an Ed25519 public key, as a trusted issuer
// is listed.
func DIDKey(pub ed25519.PublicKey) string {
	return didKeyPrefix + base58Encode(append(slices.Clone(ed25519Multicodec), pub...))
}

func pubKeyFromDID(did string) (ed25519.PublicKey, error) {
	rest, ok := strings.CutPrefix(did, didKeyPrefix)
	if !ok {
		return nil, errors.New("not a did:key in base58btc (did:key:z...)")
	}
	b, err := base58Decode(rest)
	if err != nil {
		return nil, err
	}
	if len(b) != 2+ed25519.PublicKeySize || b[0] != ed25519Multicodec[0] || b[1] != ed25519Multicodec[1] {
		return nil, errors.New("not an Ed25519 did:key (want the 0xed01 multicodec and 32 key bytes)")
	}
	return ed25519.PublicKey(b[2:]), nil
}

func base58Encode(b []byte) string {
	n := new(big.Int).SetBytes(b)
	var out []byte
	mod, base := new(big.Int), big.NewInt(58)
	for n.Sign() > 0 {
		n.DivMod(n, base, mod)
		out = append(out, base58Alphabet[mod.Int64()])
	}
	for _, c := range b {
		if c != 0 {
			break
		}
		out = append(out, base58Alphabet[0])
	}
	slices.Reverse(out)
	return string(out)
}

func base58Decode(s string) ([]byte, error) {
	if s == "" || len(s) > 128 {
		return nil, errors.New("base58 text empty or too long")
	}
	n := new(big.Int)
	base := big.NewInt(58)
	zeros := 0
	for i, c := range []byte(s) {
		d := strings.IndexByte(base58Alphabet, c)
		if d < 0 {
			return nil, errors.New("not base58btc")
		}
		if d == 0 && i == zeros {
			zeros++
		}
		n.Mul(n, base).Add(n, big.NewInt(int64(d)))
	}
	return append(make([]byte, zeros), n.Bytes()...), nil
}
