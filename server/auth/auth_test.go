package auth_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"nameservice.dev/nameservice/model"
	"nameservice.dev/nameservice/server/auth"
)

// Resolve without the whole server: the events route's modes admit a
// watcher without a token (who sees every record's events and may do
// nothing else), every other route needs a valid token, and no error
// holds the token.
func TestResolve(t *testing.T) {
	a, err := auth.NewAuthenticator(auth.Config{Tokens: []auth.TokenEntry{
		{Name: "writer", SHA256: auth.HashToken("secret-w"), Read: []string{"t/"}, Write: []string{"t/"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	req := func(token string) *http.Request {
		r := httptest.NewRequest("GET", "/", nil)
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		return r
	}
	for _, mode := range []auth.EventsAuth{auth.EventsAuthOptional, auth.EventsAuthNone} {
		p, err := auth.Resolve(a, req(""), true, mode)
		if err != nil || !p.CanEvent(model.GraphSource, "x/gs:main") || p.CanRead("x/db:main") || p.CanWrite("x/db:main") || p.Key() != "" {
			t.Errorf("%v: a watcher without a token = %+v, %v; want one who sees every event and may do nothing else", mode, p, err)
		}
	}
	if _, err := auth.Resolve(a, req("wrong-secret"), true, auth.EventsAuthOptional); err == nil || strings.Contains(err.Error(), "wrong-secret") {
		t.Errorf("optional events auth with a wrong token: %v, want a refusal that does not echo the token", err)
	}
	for _, events := range []bool{true, false} {
		if _, err := auth.Resolve(a, req(""), events, auth.EventsAuthRequired); err == nil {
			t.Errorf("events %v: a request without a token was admitted", events)
		}
		if _, err := auth.Resolve(nil, req("secret-w"), events, auth.EventsAuthRequired); err == nil || !strings.Contains(err.Error(), "not configured") {
			t.Errorf("events %v: without an authenticator: %v, want not configured", events, err)
		}
	}
	p, err := auth.Resolve(a, req("secret-w"), false, auth.EventsAuthNone)
	if err != nil || p.Name != "writer" || p.Key() != "token:writer" {
		t.Fatalf("the static token = %+v, %v", p, err)
	}
	if !p.CanWriteUnder("t/db") || p.CanWriteUnder("") || p.CanWriteUnder("u/") || !p.ListsGraphSources() ||
		!p.CanEvent(model.Ledger, "t/db:main") || p.CanEvent(model.Ledger, "u/db:main") || p.ReadsAll() || p.CanAdmin("t/db:main") {
		t.Errorf("the static token's scope is wrong: %+v", p)
	}
	if u := auth.Unrestricted(); !u.ReadsAll() || !u.CanWriteUnder("") || !u.CanAdmin("any/db:main") {
		t.Errorf("Unrestricted = %+v, want every right", u)
	}
}
