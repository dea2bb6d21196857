package server_test

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/server"
	"nameservice.dev/nameservice/server/auth"
)

func FuzzPushBody(f *testing.F) {
	f.Add("head", `{"condition":"above","new":{"v":1,"payload":{"address":"a","t":1}}}`)
	f.Add("status", `{"condition":"equals","expected":{"v":1,"payload":{"state":"ready"}},"new":{"v":2,"payload":{"state":"x"}}}`)
	f.Add("index", `{"condition":"at_least","new":{"v":0}}`)
	f.Add("config", `{"condition":"equals","expected":{"v":0},"new":{"v":1,"payload":{"a":[1,{"b":null}]}}}`)
	srv, ns := NewFuzzServer(f, server.Options{})
	f.Fuzz(func(t *testing.T, concern, body string) {
		rec := ServeOnce(srv, "POST", "/ns/v1/push/"+urlSegment(concern)+"/db:main", body)
		if !Allowed[rec.Code] {
			t.Fatalf("push %q %q: %d %s", concern, body, rec.Code, rec.Body)
		}
		if r, err := ns.Lookup(context.Background(), "db"); err != nil || r.Validate() != nil {
			t.Fatalf("the record no longer validates after push %q: %v", body, err)
		}
	})
}

func FuzzRetractAndGraphSourceBodies(f *testing.F) {
	f.Add(`{"at":1700000000}`, `{"source_type":"db:Bm25Index","dependencies":["db"],"config":{"k":1}}`)
	f.Add(`{"at":-5}`, `{"source_type":""}`)
	srv, _ := NewFuzzServer(f, server.Options{})
	f.Fuzz(func(t *testing.T, retract, gs string) {
		if rec := ServeOnce(srv, "POST", "/ns/v1/graph-sources/gs", gs); !Allowed[rec.Code] {
			t.Fatalf("graph source %q: %d %s", gs, rec.Code, rec.Body)
		}
		if rec := ServeOnce(srv, "POST", "/ns/v1/retract/db:main", retract); !Allowed[rec.Code] {
			t.Fatalf("retract %q: %d %s", retract, rec.Code, rec.Body)
		}
	})
}

// FuzzBranchBodies feeds arbitrary bodies to the branch routes (create,
// reset-head, Fluree's create and drop): never a 500, and every record
// stays valid, with a branch count that is never negative.
func FuzzBranchBodies(f *testing.F) {
	f.Add(`{"from":"main"}`, `{"commit":{"address":"c1","t":1},"clear_index":true}`, `{"ledger":"db","branch":"dev"}`)
	f.Add(`{"at":{"address":"c0","t":0}}`, `{"commit":{"address":"","t":-1},"index":{"address":"i","t":1},"clear_index":true}`, `{"ledger":"db","branch":"x","at":"t:1"}`)
	f.Add(`{"from":"x:y"}`, `{"commit":{}}`, `{"ledger":"","branch":"main"}`)
	srv, ns := NewFuzzServer(f, server.Options{})
	if _, err := ns.PublishCommit(context.Background(), "db", 2, "c2"); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, create, reset, fluree string) {
		for _, c := range []struct{ path, body string }{
			{"/ns/v1/branches/db:b1", create}, {"/ns/v1/reset-head/db:main", reset},
			{"/fluree/branch", fluree}, {"/fluree/drop-branch", fluree},
		} {
			if rec := ServeOnce(srv, "POST", c.path, c.body); !Allowed[rec.Code] {
				t.Fatalf("%s %q: %d %s", c.path, c.body, rec.Code, rec.Body)
			}
		}
		for r, err := range ns.List(context.Background(), nameservice.ListOptions{IncludeRetracted: true}) {
			if err != nil || r.Validate() != nil || r.Branches < 0 {
				t.Fatalf("after %q, %q, %q: %v %v", create, reset, fluree, err, r)
			}
		}
	})
}

// wellFormedGood matches the Authorization values that carry the token
// "good": RFC 7235's scheme (any case), 1*SP, the credentials, and the
// spaces or tabs HTTP allows after a field value.
var wellFormedGood = regexp.MustCompile(`^(?i:bearer) +good[ \t]*$`)

// FuzzAuthorization feeds arbitrary Authorization headers: every one is
// refused with 401 unless it is the static token, and none is echoed.
func FuzzAuthorization(f *testing.F) {
	a, err := auth.NewAuthenticator(auth.Config{
		Tokens:         []auth.TokenEntry{{Name: "t", SHA256: auth.HashToken("good"), Read: []string{""}}},
		TrustedIssuers: []string{"did:key:z6MkqpTi7zUDy5nnSfpLf7SPGsepMNJAxRiH1jbCZbuaZoEz"},
		Now:            func() time.Time { return time.Unix(1_700_000_000, 0) },
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Add("Bearer good")
	f.Add("Bearer eyJhbGciOiJFZERTQSIsImp3ayI6eyJrdHkiOiJPS1AiLCJjcnYiOiJFZDI1NTE5IiwieCI6IkFBIn19.e30.AAAA")
	f.Add("bearer  a.b.c")
	f.Add("BeArer  good \t")   // valid: 1*SP, then trailing OWS
	f.Add("Bearer \u00a0good") // not: only spaces separate
	f.Add("Bearer\tgood")
	srv, _ := NewFuzzServer(f, server.Options{Auth: a})
	f.Fuzz(func(t *testing.T, header string) {
		rec := ServeOnce(srv, "GET", "/ns/v1/records/db:main", "", "Authorization", header)
		ok := wellFormedGood.MatchString(header)
		if rec.Code != 401 && !(ok && rec.Code == 200) {
			t.Fatalf("Authorization %q: %d %s", header, rec.Code, rec.Body)
		}
		if len(header) > 12 && strings.Contains(rec.Body.String(), header) {
			t.Fatalf("the answer echoes the Authorization header %q", header)
		}
	})
}

func urlSegment(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "x"
	}
	return b.String()
}

// FuzzJWSClaims signs arbitrary payloads with a trusted key: a token is
// refused (401) unless its payload, read as plain JSON, holds the exact
// claims that grant the read; never a 500.
func FuzzJWSClaims(f *testing.F) {
	now := time.Unix(1_700_000_000, 0)
	is := NewIssuer(f)
	a, err := auth.NewAuthenticator(auth.Config{TrustedIssuers: []string{is.DID}, Now: func() time.Time { return now }})
	if err != nil {
		f.Fatal(err)
	}
	head := `{"iss":"` + is.DID + `","exp":1700000100`
	f.Add(head + `,"fluree.storage.all":true}`)
	f.Add(head + `,"fluree.storage.ledgers":["db"]}`)
	f.Add(head + `,"fluree.storage.ledgers":["other"],"fluree.storage.ledgers":["db"]}`)
	f.Add(head + `,"Fluree.storage.all":true}`)
	f.Add(head + `,"nbf":9223372036854775807,"fluree.storage.all":true}`)
	srv, _ := NewFuzzServer(f, server.Options{Auth: a})
	f.Fuzz(func(t *testing.T, payload string) {
		rec := ServeOnce(srv, "GET", "/v1/fluree/storage/ns/db:main", "", "Authorization", "Bearer "+is.RawToken(t, payload))
		switch rec.Code {
		case 401, 404:
			return
		case 200:
		default:
			t.Fatalf("payload %q: %d %s", payload, rec.Code, rec.Body)
		}
		var c map[string]any
		if err := json.Unmarshal([]byte(payload), &c); err != nil {
			t.Fatalf("payload %q granted a read but is not JSON: %v", payload, err)
		}
		exp, _ := c["exp"].(float64)
		ledgers, _ := c["fluree.storage.ledgers"].([]any)
		if c["iss"] != is.DID || exp < float64(now.Unix()-60) ||
			(c["fluree.storage.all"] != true && !slices.Contains(ledgers, any("db")) && !slices.Contains(ledgers, any("db:main"))) {
			t.Fatalf("payload %q granted a read without the claims for it", payload)
		}
	})
}
