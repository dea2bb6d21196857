package server_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/drivers/mem"
	"nameservice.dev/nameservice/internal/nswire"
	"nameservice.dev/nameservice/server"
	"nameservice.dev/nameservice/server/auth"
)

// listServer serves a store of tenant-a/ and tenant-b/ records with a token
// scoped to tenant-a/ ("secret-a"), one reading everything ("secret-all")
// and a trusted Issuer, under the page token key made from secret.
func listServer(t *testing.T, store *mem.Store, is Issuer, secret string) *Server {
	t.Helper()
	a, err := auth.NewAuthenticator(auth.Config{
		Tokens: []auth.TokenEntry{
			{Name: "tenant-a", SHA256: auth.HashToken("secret-a"), Read: []string{"tenant-a/"}},
			{Name: "admin", SHA256: auth.HashToken("secret-all"), Read: []string{""}},
		},
		TrustedIssuers: []string{is.DID},
	})
	Must(t, err)
	key, err := server.NewPageTokenKey([]byte(secret))
	Must(t, err)
	return StartOn(t, store.Open(), server.Options{Auth: a, PageTokenKey: key})
}

func seedTenants(t *testing.T, s *Server) {
	t.Helper()
	for _, n := range []string{"tenant-a/x1", "tenant-a/x2", "tenant-aa/other", "tenant-b/secretname", "tenant-a/x3", "zz"} {
		Must(t, s.NS.Init(context.Background(), n))
	}
}

// pages lists path page by page and returns the IDs and the tokens.
func pages(t *testing.T, s *Server, path string) (ids, tokens []string) {
	t.Helper()
	tok := ""
	for range 20 {
		p := path
		if tok != "" {
			p += "&page_token=" + url.QueryEscape(tok)
		}
		st, b := s.Call(t, "GET", p, "")
		var lr nswire.ListResponse
		if st != 200 || json.Unmarshal([]byte(b), &lr) != nil {
			t.Fatalf("%s: %d %s", p, st, b)
		}
		for _, r := range lr.Records {
			ids = append(ids, r.ID.String())
		}
		if tok = lr.NextPageToken; tok == "" {
			return ids, tokens
		}
		tokens = append(tokens, tok)
	}
	t.Fatalf("%s: more than 20 pages", path)
	return nil, nil
}

const longSecret = "0123456789abcdef0123456789abcdef-one"

// A scoped token's listing reads only its scope, and its page tokens are
// sealed: they decode to nothing that names a record, in scope or not. A
// token that is altered, made for another query or another scope, or
// sealed with another key is refused with 400.
func TestListPageTokensScopedAndSealed(t *testing.T) {
	store := mem.NewStore()
	is := NewIssuer(t)
	s := listServer(t, store, is, longSecret)
	seedTenants(t, s)
	s.Token = "secret-a"
	ids, tokens := pages(t, s, "/ns/v1/records?page_size=1")
	if strings.Join(ids, " ") != "tenant-a/x1:main tenant-a/x2:main tenant-a/x3:main" {
		t.Fatalf("scoped listing = %q", ids)
	}
	if len(tokens) < 2 {
		t.Fatalf("%d page tokens for 3 records in pages of 1", len(tokens))
	}
	for _, tok := range tokens {
		for _, enc := range []*base64.Encoding{base64.RawURLEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.StdEncoding} {
			b, _ := enc.DecodeString(tok)
			for _, leak := range []string{"tenant", "secret", ":main", "a/x"} {
				if strings.Contains(string(b), leak) || strings.Contains(tok, leak) {
					t.Fatalf("page token %q decodes to %q, which holds %q", tok, b, leak)
				}
			}
		}
	}

	refused := map[string]string{
		"altered":               alter(tokens[0]),
		"truncated":             tokens[0][:len(tokens[0])-4],
		"another query":         "prefix=tenant-a/x&page_token=" + url.QueryEscape(tokens[0]),
		"another kind":          "kind=ledger&page_token=" + url.QueryEscape(tokens[0]),
		"with retracted":        "include_retracted=true&page_token=" + url.QueryEscape(tokens[0]),
		"another state":         "state=ready&page_token=" + url.QueryEscape(tokens[0]),
		"another source type":   "source_type=db:Bm25Index&page_token=" + url.QueryEscape(tokens[0]),
		"plain ID, as before":   base64.RawURLEncoding.EncodeToString([]byte("tenant-b/secretname:main")),
		"empty sealed envelope": base64.RawURLEncoding.EncodeToString([]byte{1}),
	}
	for name, q := range refused {
		if !strings.Contains(q, "page_token=") {
			q = "page_token=" + url.QueryEscape(q)
		}
		st, b := s.Call(t, "GET", "/ns/v1/records?page_size=1&"+q, "")
		if st != 400 || !strings.Contains(b, `"code":"InvalidArgument"`) || !strings.Contains(b, "page_token") {
			t.Errorf("%s: %d %s, want 400", name, st, b)
		}
	}
	// The admin's token is not the tenant's, nor the tenant's the admin's.
	s.Token = "secret-all"
	_, adminTokens := pages(t, s, "/ns/v1/records?page_size=2")
	for _, c := range []struct{ bearer, tok string }{{"secret-a", adminTokens[0]}, {"secret-all", tokens[0]}} {
		s.Token = c.bearer
		if st, b := s.Call(t, "GET", "/ns/v1/records?page_size=1&page_token="+url.QueryEscape(c.tok), ""); st != 400 {
			t.Errorf("a token of another scope: %d %s, want 400", st, b)
		}
	}
}

// alter flips one bit in the middle of a token.
func alter(tok string) string {
	b, _ := base64.RawURLEncoding.DecodeString(tok)
	b[len(b)/2] ^= 1
	return base64.RawURLEncoding.EncodeToString(b)
}

// Servers given the same secret accept each other's page tokens; a server
// with another secret refuses them.
func TestListPageTokensSharedKey(t *testing.T) {
	store := mem.NewStore()
	is := NewIssuer(t)
	s1 := listServer(t, store, is, longSecret)
	s2 := listServer(t, store, is, longSecret)
	s3 := listServer(t, store, is, "another secret of at least 32 bytes")
	seedTenants(t, s1)
	for _, s := range []*Server{s1, s2, s3} {
		s.Token = "secret-a"
	}
	_, tokens := pages(t, s1, "/ns/v1/records?page_size=1")
	st, b := s2.Call(t, "GET", "/ns/v1/records?page_size=5&page_token="+url.QueryEscape(tokens[0]), "")
	if st != 200 || !strings.Contains(b, "tenant-a/x2:main") || strings.Contains(b, "tenant-a/x1:") {
		t.Fatalf("the second server on the first's token: %d %s", st, b)
	}
	if st, b := s3.Call(t, "GET", "/ns/v1/records?page_size=5&page_token="+url.QueryEscape(tokens[0]), ""); st != 400 {
		t.Fatalf("a server with another key: %d %s, want 400", st, b)
	}
	if _, err := server.NewPageTokenKey([]byte("short")); err == nil {
		t.Fatal("a 5-byte page token key was accepted")
	}
}

// A Fluree JWS granting exact ledgers lists exactly those, in ID order,
// whatever lies between them.
func TestListExactGrants(t *testing.T) {
	store := mem.NewStore()
	is := NewIssuer(t)
	s := listServer(t, store, is, longSecret)
	seedTenants(t, s)
	s.Token = is.Token(t, is.Claims(map[string]any{"fluree.storage.ledgers": []string{"zz", "tenant-a/x2", "tenant-b/missing"}}))
	ids, _ := pages(t, s, "/ns/v1/records?page_size=1")
	if strings.Join(ids, " ") != "tenant-a/x2:main zz:main" {
		t.Fatalf("listing of exact grants = %q", ids)
	}
	ids, _ = pages(t, s, "/ns/v1/records?page_size=10&prefix=tenant")
	if strings.Join(ids, " ") != "tenant-a/x2:main" {
		t.Fatalf("listing of exact grants under a prefix = %q", ids)
	}
}

// A listing by state or source type reads only the caller's scope, and
// its page tokens open only for the same selection.
func TestListBySelectionScoped(t *testing.T) {
	store := mem.NewStore()
	s := listServer(t, store, NewIssuer(t), longSecret)
	seedTenants(t, s)
	ctx := context.Background()
	for _, id := range []string{"tenant-a/x1", "tenant-a/x3", "tenant-b/secretname"} {
		_, err := s.NS.PushStatus(ctx, id, nameservice.StatusValue(1, "ready", nil), nameservice.StatusValue(2, "error", nil))
		Must(t, err)
	}
	Must(t, s.NS.PublishGraphSource(ctx, "tenant-a/gs", "db:Bm25Index", nil, nil))
	Must(t, s.NS.PublishGraphSource(ctx, "tenant-b/gs", "db:Bm25Index", nil, nil))
	s.Token = "secret-a"
	ids, tokens := pages(t, s, "/ns/v1/records?page_size=1&state=error")
	if strings.Join(ids, " ") != "tenant-a/x1:main tenant-a/x3:main" {
		t.Fatalf("scoped listing by state = %q", ids)
	}
	if st, b := s.Call(t, "GET", "/ns/v1/records?page_size=1&state=ready&page_token="+url.QueryEscape(tokens[0]), ""); st != 400 {
		t.Fatalf("a token of state=error for state=ready: %d %s, want 400", st, b)
	}
	if ids, _ = pages(t, s, "/ns/v1/records?source_type=db:Bm25Index"); strings.Join(ids, " ") != "tenant-a/gs:main" {
		t.Fatalf("scoped listing by source type = %q", ids)
	}
	if st, b := s.Call(t, "GET", "/ns/v1/records?state=%FF", ""); st != 400 || !strings.Contains(b, "UTF-8") {
		t.Fatalf("a state that is not UTF-8: %d %s, want 400", st, b)
	}
}

// GET /ns/v1/heads/{id} answers a ledger's two pointers; a graph source
// is 409 WrongKind, and an ID outside the caller's scope the same 404 as
// one that does not exist.
func TestHeadsRoute(t *testing.T) {
	store := mem.NewStore()
	s := listServer(t, store, NewIssuer(t), longSecret)
	seedTenants(t, s)
	ctx := context.Background()
	_, err := s.NS.PublishCommit(ctx, "tenant-a/x1", 2, "c2")
	Must(t, err)
	Must(t, s.NS.PublishGraphSource(ctx, "tenant-a/gs", "db:Bm25Index", nil, nil))
	s.Token = "secret-a"
	st, b := s.Call(t, "GET", "/ns/v1/heads/tenant-a/x1:main", "")
	Want(t, "heads", st, b, 200, `{"head":{"v":2,"payload":{"address":"c2","t":2}},"index":{"v":0}}`)
	if st, b := s.Call(t, "GET", "/ns/v1/heads/tenant-a/gs", ""); st != 409 || !strings.Contains(b, `"code":"WrongKind"`) {
		t.Fatalf("heads of a graph source: %d %s", st, b)
	}
	_, missing := s.Call(t, "GET", "/ns/v1/heads/tenant-a/none", "")
	st, b = s.Call(t, "GET", "/ns/v1/heads/tenant-b/secretname", "")
	Want(t, "heads out of scope", st, strings.ReplaceAll(b, "tenant-b/secretname", "tenant-a/none"), 404, missing)
}
