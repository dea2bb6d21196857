package server

import (
	"errors"
	"fmt"
	"testing"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/model"

	"nameservice.dev/nameservice/server/auth"
)

func TestSources(t *testing.T) {
	for _, c := range []struct {
		read   []string
		exact  []string
		prefix string
		want   string
	}{
		{read: []string{""}, prefix: "x", want: "[{x false}]"},
		{read: []string{"a/"}, prefix: "", want: "[{a/ false}]"},
		{read: []string{"a/"}, prefix: "a/b", want: "[{a/b false}]"},
		{read: []string{"a/"}, prefix: "b", want: "[]"},
		{read: []string{"b/", "a/", "a/x/"}, prefix: "", want: "[{a/ false} {b/ false}]"},
		{read: []string{"a/", "a/"}, prefix: "a", want: "[{a/ false}]"},
		{read: []string{"a/"}, exact: []string{"a/z:main", "b:main", "a:main"}, prefix: "",
			want: "[{a/ false} {a:main true} {b:main true}]"},
		{read: []string{"a:main/"}, exact: []string{"a:main"}, prefix: "a", want: "[{a:main true} {a:main/ false}]"},
		{exact: []string{"a:main"}, read: []string{"a:main"}, want: "[{a:main false}]"},
		{exact: []string{"a:main", "b:main"}, prefix: "b", want: "[{b:main true}]"},
	} {
		p := &auth.Principal{Read: c.read, Exact: map[string]bool{}}
		for _, e := range c.exact {
			p.Exact[e] = true
		}
		got := fmt.Sprint(sources(p, c.prefix))
		if got != c.want {
			t.Errorf("sources(read %q, exact %q, prefix %q) = %s, want %s", c.read, c.exact, c.prefix, got, c.want)
		}
	}
}

// A page token opens only as sealed, for its binding and key.
func TestPageTokenRoundTrip(t *testing.T) {
	k, err := NewPageTokenKey([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	b := binding(&auth.Principal{Name: "n", Read: []string{"a/"}}, nameservice.ListOptions{Prefix: "a"})
	pos := position{src: 3, tok: "driver token"}
	got, err := k.open(k.seal(pos, b), b)
	if err != nil || got != pos {
		t.Fatalf("open(seal(%v)) = %v, %v", pos, got, err)
	}
	other := binding(&auth.Principal{Name: "n", Read: []string{"a/", "b/"}}, nameservice.ListOptions{Prefix: "a"})
	if _, err := k.open(k.seal(pos, b), other); !errors.Is(err, model.ErrInvalidArgument) {
		t.Fatalf("open under a wider scope: %v, want ErrInvalidArgument", err)
	}
	if _, err := randomPageTokenKey().open(k.seal(pos, b), b); !errors.Is(err, model.ErrInvalidArgument) {
		t.Fatalf("open under another key: %v, want ErrInvalidArgument", err)
	}
}

// FuzzPageToken: any string either opens (only a sealed token does) or is
// refused with ErrInvalidArgument; nothing panics.
func FuzzPageToken(f *testing.F) {
	k, _ := NewPageTokenKey([]byte("0123456789abcdef0123456789abcdef"))
	b := binding(&auth.Principal{Name: "n", Read: []string{""}}, nameservice.ListOptions{})
	// The only position ever sealed under this key: a token that opens to
	// anything else was forged.
	sealed := position{src: 1, tok: "x"}
	f.Add(k.seal(sealed, b))
	f.Add("AQ")
	f.Add("%%%")
	f.Fuzz(func(t *testing.T, tok string) {
		pos, err := k.open(tok, b)
		if err != nil {
			if !errors.Is(err, model.ErrInvalidArgument) {
				t.Fatalf("error %v does not wrap ErrInvalidArgument", err)
			}
			return
		}
		if tok != "" && pos != sealed {
			t.Fatalf("%q opened to %v, which was never sealed", tok, pos)
		}
	})
}
