package server_test

import (
	"context"
	"testing"

	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/server"
)

// TestFlureeRoutesKeepTheRules: Fluree's ref push refuses a content ID
// Fluree itself cannot read and a t at which an increment would overflow,
// writing nothing.
func TestFlureeRoutesKeepTheRules(t *testing.T) {
	s := Start(t, server.Options{})
	Must(t, s.NS.Init(context.Background(), "db"))
	before := s.Get(t, "/ns/v1/records/db:main")
	for _, c := range []struct{ name, body string }{
		{"non-canonical content ID", `{"expected":{"id":null,"t":0},"new":{"id":"` + NonMinimalCID() + `","t":1}}`},
		{"65-byte digest", `{"expected":{"id":null,"t":0},"new":{"id":"` + LongDigestCID() + `","t":1}}`},
		{"t 2^63-1", `{"expected":{"id":null,"t":0},"new":{"id":"` + testenv.CID("x") + `","t":9223372036854775807}}`},
	} {
		st, b := s.Call(t, "POST", "/v1/fluree/nameservice/refs/db:main/commit", c.body)
		if st != 400 && st != 422 {
			t.Errorf("%s: %d %s, want 400 or 422", c.name, st, b)
		}
	}
	if got := s.Get(t, "/ns/v1/records/db:main"); got != before {
		t.Errorf("a refused push changed the record:\n%s\n%s", before, got)
	}
}
