package remote_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/mem"
	"nameservice.dev/nameservice/drivers/remote"
	"nameservice.dev/nameservice/internal/testing/faultproxy"
	"nameservice.dev/nameservice/model"
	"nameservice.dev/nameservice/server"
	"nameservice.dev/nameservice/server/auth"
)

// When every answer to a request is lost, the error says so, matches
// ErrUnavailable and names the record's ID once (a write's says its
// outcome is unknown): answers cut off by a reset, and 500s from a proxy
// that forwarded the request.
func TestLostAnswersNameTheIDOnce(t *testing.T) {
	for _, f := range []faultproxy.Fault{faultproxy.ResetAfter, faultproxy.Error500After} {
		t.Run(f.String(), func(t *testing.T) {
			hs := serve(t, mem.NewStore().Open(), server.Options{})
			p, err := faultproxy.Start(faultproxy.Config{Target: hs.URL, Rates: map[faultproxy.Fault]float64{f: 1}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = p.Close() })
			d, err := remote.Open(context.Background(), remote.Config{BaseURL: p.URL(), MaxAttempts: 2})
			if err != nil {
				t.Fatal(err)
			}
			ns := nameservice.New(d)
			t.Cleanup(func() { _ = ns.Close() })
			ctx := context.Background()
			for what, err := range map[string]error{
				"init":   ns.Init(ctx, "lost"),
				"lookup": second(ns.Lookup(ctx, "lost")),
			} {
				if !errors.Is(err, nameservice.ErrUnavailable) || strings.Count(err.Error(), "lost:main") != 1 ||
					(what == "init") != strings.Contains(err.Error(), "outcome unknown") {
					t.Errorf("%s: %v, want an ErrUnavailable naming lost:main once", what, err)
				}
				t.Logf("%s: %v", what, err)
			}
		})
	}
}

func second[T any](_ T, err error) error { return err }

// A token that may read but not write a record: the server's 403 is an
// error wrapping ErrPermissionDenied on the client, naming the ID once.
func TestReadOnlyTokenIsPermissionDenied(t *testing.T) {
	authn, err := auth.NewAuthenticator(auth.Config{Tokens: []auth.TokenEntry{
		{Name: "reader", SHA256: auth.HashToken("read-token"), Read: []string{""}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	backend := mem.NewStore().Open()
	ctx := context.Background()
	if err := nameservice.New(backend).Init(ctx, "ro"); err != nil {
		t.Fatal(err)
	}
	hs := serve(t, backend, server.Options{Auth: authn})
	d, err := remote.Open(ctx, remote.Config{BaseURL: hs.URL, Token: "read-token"})
	if err != nil {
		t.Fatal(err)
	}
	ns := nameservice.New(d)
	t.Cleanup(func() { _ = ns.Close() })
	if _, err := ns.Lookup(ctx, "ro"); err != nil {
		t.Fatalf("read with a read token: %v", err)
	}
	_, err = ns.PublishCommit(ctx, "ro", 1, "c1")
	if !errors.Is(err, nameservice.ErrPermissionDenied) || strings.Count(err.Error(), "ro:main") != 1 {
		t.Fatalf("write with a read token: %v, want an ErrPermissionDenied naming ro:main once", err)
	}
}

// A listing whose answer holds a null record (a broken proxy or server in
// between) is a malformed answer, an error wrapping ErrInternal: never a
// panic, never a nil record handed on.
func TestListAnswerWithANullRecordIsMalformed(t *testing.T) {
	hs := serve(t, mem.NewStore().Open(), server.Options{})
	target, _ := url.Parse(hs.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ns/v1/records" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"records":[null]}`)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	d, err := remote.Open(context.Background(), remote.Config{BaseURL: front.URL})
	must(t, err)
	ns := nameservice.New(d)
	must(t, ns.Init(context.Background(), "db"))
	for _, opts := range []driver.ListOptions{{}, {State: "ready"}, {Kind: model.Ledger, IncludeRetracted: true}} {
		var page *driver.Page
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("list %+v: panic: %v", opts, p)
				}
			}()
			page, err = d.List(context.Background(), opts)
		}()
		if !errors.Is(err, model.ErrInternal) || page != nil {
			t.Fatalf("list %+v: %v, %v; want a malformed answer (ErrInternal)", opts, page, err)
		}
	}
}
