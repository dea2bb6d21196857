package server_test

import (
	"context"
	"strings"
	"testing"

	"nameservice.dev/nameservice/drivers/fs"
	"nameservice.dev/nameservice/server"
)

// deepJSON is a JSON object nested n levels deep.
func deepJSON(n int) string {
	return strings.Repeat(`{"a":`, n-1) + `{}` + strings.Repeat(`}`, n-1)
}

// ledgerJSON is the record JSON of ledger id with the given status and
// config values and extra meta fields.
func ledgerJSON(id, status, config, extra string) string {
	name, branch, _ := strings.Cut(id, ":")
	return `{"id":"` + id + `","kind":"ledger","name":"` + name + `","branch":"` + branch + `","retracted":false` + extra +
		`,"head":{"v":0},"index":{"v":0},"status":` + status + `,"config":` + config + `}`
}

// TestRawRoutesKeepTheRules: the /ns/v1 routes, which speak the driver
// contract, write through the NameService: a record or value that breaks a rule
// is refused with 400 naming it, and nothing is written.
func TestRawRoutesKeepTheRules(t *testing.T) {
	s := Start(t, server.Options{})
	Must(t, s.NS.Init(context.Background(), "db"))
	before := s.Get(t, "/ns/v1/records/db:main")
	ready := `{"v":1,"payload":{"state":"ready"}}`
	for _, c := range []struct{ name, method, path, body, want string }{
		{"create with a 30-deep config", "PUT", "/ns/v1/records/new:main",
			ledgerJSON("new:main", ready, `{"v":1,"payload":`+deepJSON(30)+`}`, ""), "limit of 20"},
		{"push of a 30-deep config", "POST", "/ns/v1/push/config/db:main",
			`{"condition":"equals","expected":{"v":0},"new":{"v":1,"payload":` + deepJSON(30) + `}}`, "limit of 20"},
		{"status at 2^63-1", "POST", "/ns/v1/push/status/db:main",
			`{"condition":"equals","expected":` + ready + `,"new":{"v":9223372036854775807,"payload":{"state":"x"}}}`, "status_v"},
		{"create at 2^63-1", "PUT", "/ns/v1/records/new:main",
			ledgerJSON("new:main", `{"v":9223372036854775807,"payload":{"state":"ready"}}`, `{"v":0}`, ""), "status_v"},
		{"branches 2^32", "PUT", "/ns/v1/records/new:main", ledgerJSON("new:main", ready, `{"v":0}`, `,"branches":4294967296`), "branches"},
		{"non-canonical content ID", "POST", "/ns/v1/push/head/db:main",
			`{"condition":"above","new":{"v":1,"payload":{"address":"` + NonMinimalCID() + `","t":1}}}`, "shortest form"},
		{"65-byte digest", "POST", "/ns/v1/push/index/db:main",
			`{"condition":"above","new":{"v":1,"payload":{"address":"` + LongDigestCID() + `","t":1}}}`, "65 bytes"},
		{"lone surrogate", "POST", "/ns/v1/push/status/db:main",
			`{"condition":"equals","expected":` + ready + `,"new":{"v":2,"payload":{"state":"x\udcff"}}}`, `\\udcff`},
	} {
		st, b := s.Call(t, c.method, c.path, c.body)
		if st != 400 || !strings.Contains(b, c.want) || !strings.Contains(b, `"code":"InvalidArgument"`) {
			t.Errorf("%s: %d %s, want 400 naming %q", c.name, st, b, c.want)
		}
	}
	if got := s.Get(t, "/ns/v1/records/db:main"); got != before {
		t.Errorf("a refused write changed the record:\n%s\n%s", before, got)
	}
	if st, b := s.Call(t, "GET", "/ns/v1/records/new:main", ""); st != 404 {
		t.Errorf("a refused create wrote the record: %d %s", st, b)
	}
}

// TestIDsSharingAFile: over the file store, x/y:main and x:y/main map to
// one file; through the server the second create is refused and a lookup
// of it is not found, neither naming the other ID.
func TestIDsSharingAFile(t *testing.T) {
	d, err := fs.Open(context.Background(), fs.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	s := StartOn(t, d, server.Options{})
	ready := `{"v":1,"payload":{"state":"ready"}}`
	if st, b := s.Call(t, "PUT", "/ns/v1/records/x/y:main", ledgerJSON("x/y:main", ready, `{"v":0}`, "")); st != 201 {
		t.Fatalf("create x/y:main: %d %s", st, b)
	}
	st, b := s.Call(t, "PUT", "/ns/v1/records/x:y/main", ledgerJSON("x:y/main", ready, `{"v":0}`, ""))
	if st != 409 || strings.Contains(b, "x/y:main") {
		t.Errorf("create x:y/main beside x/y:main: %d %s, want 409 not naming x/y:main", st, b)
	}
	st, b = s.Call(t, "GET", "/ns/v1/records/x:y/main", "")
	if st != 404 || strings.Contains(b, "x/y:main") {
		t.Errorf("lookup x:y/main: %d %s, want 404 not naming x/y:main", st, b)
	}
}
