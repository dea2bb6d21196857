package server

import (
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"

	"golang.org/x/crypto/chacha20poly1305"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/model"
	"nameservice.dev/nameservice/server/auth"
)

// MinPageTokenKeyBytes is the shortest secret NewPageTokenKey accepts.
const MinPageTokenKeyBytes = 32

// A page token of GET /ns/v1/records says where the next page starts: which
// of the listing's sources (see sources) and the backend's own token in it.
// It is sealed with XChaCha20-Poly1305, its associated data binding it to
// the caller's scope and the query, so that a client can neither read it
// (the backend's token names an ID) nor forge or alter it, nor use it with
// another query or another scope.

// tokenVersion is the first byte of every sealed token.
const tokenVersion = 1

// PageTokenKey seals the page tokens of GET /ns/v1/records (see
// Options.PageTokenKey). Make one with NewPageTokenKey.
type PageTokenKey struct {
	key []byte
}

// NewPageTokenKey derives a page token key from secret, which must hold at
// least MinPageTokenKeyBytes bytes (e.g. 32 random bytes, or 64 hex
// digits). Servers given keys made from the same secret accept each
// other's tokens.
func NewPageTokenKey(secret []byte) (*PageTokenKey, error) {
	if len(secret) < MinPageTokenKeyBytes {
		return nil, fmt.Errorf("page token key: %d bytes, want at least %d", len(secret), MinPageTokenKeyBytes)
	}
	key, err := hkdf.Key(sha256.New, secret, nil, "nameservice /ns/v1/records page token v1", chacha20poly1305.KeySize)
	if err != nil {
		return nil, fmt.Errorf("page token key: %w", err)
	}
	return &PageTokenKey{key: key}, nil
}

// randomPageTokenKey returns a key of a random secret: its tokens open on
// this server only, until it restarts.
func randomPageTokenKey() *PageTokenKey {
	secret := make([]byte, MinPageTokenKeyBytes)
	_, _ = rand.Read(secret)
	k, _ := NewPageTokenKey(secret)
	return k
}

// position is where a page starts: source src of the listing, at the
// backend's page token tok ("" for the source's start).
type position struct {
	src int
	tok string
}

// errBadToken answers every token that does not open, whatever the reason,
// so that the answer tells nothing about what the token holds.
var errBadToken = fmt.Errorf("%w: page_token is not a token of this listing (altered, for another query or scope, or from a server with another key)", model.ErrInvalidArgument)

// seal returns the token of pos for a listing bound to binding.
func (ts *PageTokenKey) seal(pos position, binding []byte) string {
	aead, _ := chacha20poly1305.NewX(ts.key)
	plain := binary.AppendUvarint(nil, uint64(pos.src))
	plain = append(plain, pos.tok...)
	out := make([]byte, 1+aead.NonceSize(), 1+aead.NonceSize()+len(plain)+aead.Overhead())
	out[0] = tokenVersion
	_, _ = rand.Read(out[1:])
	out = aead.Seal(out, out[1:], plain, binding)
	return base64.RawURLEncoding.EncodeToString(out)
}

// open returns the position of tok, a token sealed for binding; the empty
// token is the start of the listing.
func (ts *PageTokenKey) open(tok string, binding []byte) (position, error) {
	if tok == "" {
		return position{}, nil
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(tok)
	aead, _ := chacha20poly1305.NewX(ts.key)
	if err != nil || len(raw) < 1+aead.NonceSize()+aead.Overhead() || raw[0] != tokenVersion {
		return position{}, errBadToken
	}
	nonce, sealed := raw[1:1+aead.NonceSize()], raw[1+aead.NonceSize():]
	plain, err := aead.Open(nil, nonce, sealed, binding)
	if err != nil {
		return position{}, errBadToken
	}
	src, n := binary.Uvarint(plain)
	if n <= 0 || src > 1<<20 {
		return position{}, errBadToken
	}
	return position{src: int(src), tok: string(plain[n:])}, nil
}

// binding returns what a page token of q for p is bound to: the principal,
// its read scope, and the query. Each field is length-prefixed, so that no
// two different bindings encode alike.
func binding(p *auth.Principal, q nameservice.ListOptions) []byte {
	exact := slices.Sorted(maps.Keys(p.Exact))
	read := slices.Clone(p.Read)
	slices.Sort(read)
	var b []byte
	field := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	list := func(l []string) {
		b = binary.AppendUvarint(b, uint64(len(l)))
		for _, s := range l {
			field(s)
		}
	}
	field(p.Key()) // who: a static token, or a JWS issuer and subject
	list(read)
	list(exact)
	field(string(q.Kind))
	field(q.Prefix)
	if q.IncludeRetracted {
		field("retracted")
	} else {
		field("")
	}
	if q.State != "" || q.SourceType != "" {
		// Only then, so that the tokens of servers from before these
		// filters still open: no binding with them is one without.
		field(q.State)
		field(q.SourceType)
	}
	return b
}
