package server

import (
	"context"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"

	"golang.org/x/crypto/chacha20poly1305"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/guard"
	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/model"
	"nameservice.dev/nameservice/server/auth"
	"nameservice.dev/nameservice/server/internal/web"
)

// lister lists what a principal may read (web.Lister), sealing its page
// tokens with key. It reads only what the scope covers (see sources), so
// that neither the answer, its tokens, its size nor its time tells anything
// of the records outside it.
type lister struct {
	ns  *nameservice.NameService
	key *PageTokenKey
}

// Page implements web.Lister. It checks q itself: a scope of exact IDs, or
// one that meets no prefix of q, asks the layer for no listing, and a
// malformed query must be refused whatever the scope.
func (l *lister) Page(ctx context.Context, p *auth.Principal, q nameservice.ListOptions, token string, size int) (web.Page, error) {
	if err := guard.CheckList(q); err != nil {
		return web.Page{}, err
	}
	bound := binding(p, q)
	pos, err := l.key.open(token, bound)
	if err != nil {
		return web.Page{}, err
	}
	srcs := sources(p, q.Prefix)
	var page web.Page
	for pos.src < len(srcs) && len(page.Records)+len(page.Failed) < size {
		e, next, err := l.step(ctx, p, srcs, q, pos, size-len(page.Records)-len(page.Failed))
		if err != nil {
			return web.Page{}, err
		}
		page.Records = append(page.Records, e.Records...)
		page.Failed = append(page.Failed, e.Failed...)
		pos = next
	}
	if pos.src < len(srcs) {
		page.Next = l.key.seal(pos, bound)
	}
	return page, nil
}

// source is one range of a listing: the IDs starting with key, or when
// exact the ID key alone.
type source struct {
	key   string
	exact bool
}

// sources returns the ranges a listing of the IDs starting with prefix reads
// for p, in ID order: the read prefixes that meet prefix (listed with the
// backend's paging) and the exact IDs (read one by one), sorted by key and
// none inside another, so that they cover disjoint, ordered ranges.
func sources(p *auth.Principal, prefix string) []source {
	if p.ReadsAll() {
		return []source{{key: prefix}}
	}
	var out []source
	for _, rp := range p.Read {
		switch {
		case strings.HasPrefix(prefix, rp):
			out = append(out, source{key: prefix})
		case strings.HasPrefix(rp, prefix):
			out = append(out, source{key: rp})
		}
	}
	for id := range p.Exact {
		if strings.HasPrefix(id, prefix) {
			out = append(out, source{key: id, exact: true})
		}
	}
	slices.SortFunc(out, func(a, b source) int { return strings.Compare(a.key, b.key) })
	out = slices.CompactFunc(out, func(a, b source) bool { return a.key == b.key && a.exact == b.exact })
	return slices.DeleteFunc(slices.Clone(out), func(s source) bool { // inside another
		return slices.ContainsFunc(out, func(o source) bool {
			return !o.exact && strings.HasPrefix(s.key, o.key) && (o.key != s.key || s.exact)
		})
	})
}

// step reads up to max entries of the listing srcs of q from pos, and
// returns them with the position after them (past the last source at the
// end).
func (l *lister) step(ctx context.Context, p *auth.Principal, srcs []source, q nameservice.ListOptions,
	pos position, max int) (web.Page, position, error) {
	src := srcs[pos.src]
	next := position{src: pos.src + 1}
	if src.exact {
		e, err := l.readExact(ctx, src.key, q)
		return e, next, err
	}
	opts := q
	opts.Prefix, opts.PageSize, opts.PageToken = src.key, max, pos.tok
	page, err := l.ns.ListPage(ctx, opts)
	if err != nil {
		return web.Page{}, pos, err
	}
	if page.NextPageToken != "" {
		if page.NextPageToken == pos.tok {
			return web.Page{}, pos, fmt.Errorf("list: %w: the backend gave the same page token twice", model.ErrInternal)
		}
		next = position{src: pos.src, tok: page.NextPageToken}
	}
	var e web.Page
	for _, rec := range page.Records {
		if p.CanRead(rec.ID.String()) {
			e.Records = append(e.Records, rec)
		}
	}
	for _, f := range page.Failed {
		if visibleFailure(p, f) {
			e.Failed = append(e.Failed, f)
		}
	}
	return e, next, nil
}

// readExact reads the record of an exact source, when the query selects it.
func (l *lister) readExact(ctx context.Context, key string, q nameservice.ListOptions) (web.Page, error) {
	id, err := model.ParseID(key)
	if err != nil {
		return web.Page{}, nil
	}
	rec, err := l.ns.Get(ctx, id)
	switch {
	case errors.Is(err, model.ErrNotFound):
		return web.Page{}, nil
	case err != nil && driverutil.PerRecord(err):
		return web.Page{Failed: []*model.RecordError{{ID: id, Object: key, Err: err}}}, nil
	case err != nil:
		return web.Page{}, err
	case !q.Matches(rec):
		return web.Page{}, nil
	}
	return web.Page{Records: []*model.Record{rec}}, nil
}

// scanPageSize is the size of the backend pages a whole listing reads.
const scanPageSize = 500

// Scan implements web.Lister: the records that could not be read come
// after the records of their backend page.
func (l *lister) Scan(ctx context.Context, p *auth.Principal, q nameservice.ListOptions) iter.Seq2[*model.Record, error] {
	return func(yield func(*model.Record, error) bool) {
		srcs := sources(p, q.Prefix)
		for pos := (position{}); pos.src < len(srcs); {
			e, next, err := l.step(ctx, p, srcs, q, pos, scanPageSize)
			if err != nil {
				yield(nil, err)
				return
			}
			for _, rec := range e.Records {
				if !yield(rec, nil) {
					return
				}
			}
			for _, f := range e.Failed {
				if !yield(nil, f) {
					return
				}
			}
			pos = next
		}
	}
}

// MinPageTokenKeyBytes is the shortest secret NewPageTokenKey accepts.
const MinPageTokenKeyBytes = 32

// A page token of GET /ns/v1/records is a position sealed with
// XChaCha20-Poly1305, bound to the caller's scope and the query, so that a
// client can neither read it (the backend's token names an ID), forge or
// alter it, nor use it with another query or scope.

// tokenVersion is the first byte of every sealed token.
const tokenVersion = 1

// PageTokenKey seals the page tokens of GET /ns/v1/records (see
// Options.PageTokenKey). Make one with NewPageTokenKey.
type PageTokenKey struct {
	key []byte
}

// NewPageTokenKey derives a page token key from secret, of at least
// MinPageTokenKeyBytes bytes. Servers with keys of one secret accept each
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

func randomPageTokenKey() *PageTokenKey {
	secret := make([]byte, MinPageTokenKeyBytes)
	_, _ = rand.Read(secret)
	k, _ := NewPageTokenKey(secret)
	return k
}

// position is where a page starts: source src, at the backend's page
// token tok ("" for the source's start).
type position struct {
	src int
	tok string
}

// errBadToken answers every token that does not open, whatever the reason,
// so that the answer tells nothing about what the token holds.
var errBadToken = fmt.Errorf("%w: page_token is not a token of this listing (altered, for another query or scope, or from a server with another key)", model.ErrInvalidArgument)

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

// binding returns what a page token of q for p is bound to, each field
// length-prefixed so that no two bindings encode alike.
func binding(p *auth.Principal, q nameservice.ListOptions) []byte {
	exact := slices.Sorted(maps.Keys(p.Exact))
	read := slices.Sorted(slices.Values(p.Read))
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
		// filters still open.
		field(q.State)
		field(q.SourceType)
	}
	return b
}
