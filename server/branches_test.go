package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/dynamodb"
	"nameservice.dev/nameservice/drivers/mem"
	"nameservice.dev/nameservice/internal/nswire"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/server"
	"nameservice.dev/nameservice/server/auth"
)

// TestBranchRoutes creates and drops branches through /ns/v1 within and
// outside the scopes: a create needs write access to the branch and read
// access to its source, which otherwise answers as missing.
func TestBranchRoutes(t *testing.T) {
	s, _ := BranchServer(t)
	s.Token = "secret-t1"
	st, b := s.Call(t, "POST", "/ns/v1/branches/t1/db:dev", `{}`)
	if st != 201 || !strings.Contains(b, `"source_branch":"main"`) || !strings.Contains(b, `"head":{"v":3,`) {
		t.Fatalf("create: %d %s", st, b)
	}
	if st, b := s.Call(t, "POST", "/ns/v1/branches/t1/db:dev", `{}`); st != 409 || !strings.Contains(b, `"code":"AlreadyExists"`) {
		t.Fatalf("create again: %d %s", st, b)
	}
	st, b = s.Call(t, "POST", "/ns/v1/branches/t1/db:old", `{"from":"main","at":{"address":"c2","t":2}}`)
	if st != 201 || !strings.Contains(b, `"branch_point":{"address":"c2","t":2}`) {
		t.Fatalf("create at a commit: %d %s", st, b)
	}
	if st, b := s.Call(t, "POST", "/ns/v1/branches/t2/db:dev", `{}`); st != 404 {
		t.Fatalf("create out of the write scope: %d %s", st, b)
	}
	st, b = s.Call(t, "DELETE", "/ns/v1/branches/t1/db:main", "")
	if st != 409 || !strings.Contains(b, `"code":"HasBranches"`) || !strings.Contains(b, "has 2 branch") {
		t.Fatalf("drop of a source with branches: %d %s", st, b)
	}
	if st, b := s.Call(t, "DELETE", "/ns/v1/branches/t1/db:old", ""); st != 204 {
		t.Fatalf("drop: %d %s", st, b)
	}

	// Write access to the branch alone: the source answers as missing.
	s.Token = "secret-feature"
	WantCall(t, "source out of the read scope", s, "POST", "/ns/v1/branches/t1/db:feature", `{}`, 404,
		`{"error":"not found: t1/db:main","code":"NotFound"}`)
	s.Token = "secret-reader"
	if st, b := s.Call(t, "DELETE", "/ns/v1/branches/t1/db:dev", ""); st != 403 {
		t.Fatalf("a reader's drop: %d %s", st, b)
	}
	rec, err := s.NS.Lookup(context.Background(), "t1/db")
	Must(t, err)
	if rec.Branches != 1 {
		t.Fatalf("t1/db has %d branches, want 1 (dev)", rec.Branches)
	}
}

// TestResetHeadNeedsAdmin: reset-head is refused to writers and readers
// (403) and to those who cannot read the ID (404), applied for an admin,
// and logged with who asked and what it replaced.
func TestResetHeadNeedsAdmin(t *testing.T) {
	s, logs := BranchServer(t)
	body := `{"commit":{"address":"c1","t":1},"clear_index":true}`
	for _, c := range []struct {
		token, id string
		status    int
	}{
		{"secret-t1", "t1/db", 403}, {"secret-reader", "t1/db", 403}, {"secret-admin", "t2/db", 404}, {"secret-feature", "t1/db", 404},
	} {
		s.Token = c.token
		if st, b := s.Call(t, "POST", "/ns/v1/reset-head/"+c.id+":main", body); st != c.status {
			t.Fatalf("%s resets %s: %d %s, want %d", c.token, c.id, st, b, c.status)
		}
	}
	head, err := s.NS.Head(context.Background(), "t1/db")
	Must(t, err)
	if head.V != 3 || strings.Contains(logs.String(), "head reset") {
		t.Fatalf("a refused reset changed the head (%v) or was logged as done", head)
	}
	s.Token = "secret-admin"
	st, b := s.Call(t, "POST", "/ns/v1/reset-head/t1/db:main", body)
	if st != http.StatusOK || !strings.Contains(b, `"head":{"v":3,`) {
		t.Fatalf("admin's reset: %d %s, want 200 with the record before", st, b)
	}
	if head, _ = s.NS.Head(context.Background(), "t1/db"); head.V != 1 {
		t.Fatalf("head after reset: %v", head)
	}
	log := logs.String()
	if !strings.Contains(log, `"msg":"head reset"`) || !strings.Contains(log, `"principal":"t1-admin"`) || !strings.Contains(log, `"id":"t1/db:main"`) {
		t.Fatalf("the reset is not logged with its principal and ID:\n%s", log)
	}
}

// TestResetHeadResend: a reset resent to an instance that has no answer
// for it (another instance, or this one restarted) is not run again: the
// head moved on since the first attempt stays where it is, and the answer
// is outcome unknown. A resend to the instance that ran it gets its answer.
func TestResetHeadResend(t *testing.T) {
	s, _ := BranchServer(t)
	s.Token = "secret-admin"
	body := `{"commit":{"address":"c1","t":1}}`
	st, b := s.Call(t, "POST", "/ns/v1/reset-head/t1/db:main", body, nswire.HeaderIdempotencyKey, "r1", nswire.HeaderAttempt, "1")
	if st != http.StatusOK || !strings.Contains(b, `"head":{"v":3,`) {
		t.Fatalf("reset: %d %s", st, b)
	}
	ctx := context.Background()
	_, err := s.NS.PublishCommit(ctx, "t1/db", 2, "c2")
	Must(t, err)
	if st, b := s.Call(t, "POST", "/ns/v1/reset-head/t1/db:main", body, nswire.HeaderIdempotencyKey, "r1", nswire.HeaderAttempt, "2"); st != http.StatusOK || !strings.Contains(b, `"head":{"v":3,`) {
		t.Fatalf("resend to the instance that ran it: %d %s, want its first answer", st, b)
	}
	st, b = s.Call(t, "POST", "/ns/v1/reset-head/t1/db:main", body, nswire.HeaderIdempotencyKey, "r-lost", nswire.HeaderAttempt, "2")
	if st != http.StatusServiceUnavailable || !strings.Contains(b, `"outcome_unknown":true`) {
		t.Fatalf("resend without an answer: %d %s, want 503 outcome unknown", st, b)
	}
	if head, err := s.NS.Head(ctx, "t1/db"); err != nil || head.V != 2 {
		t.Fatalf("head after the resend: %v %v, want t 2 (not reset again)", head, err)
	}
}

// A record created whole (PUT) that names a source branch is uncounted from
// that source when it is dropped: claiming a source is a write to it. A
// token without write access to the source cannot create such a record
// (404 when it cannot read the source, 403 when it only reads it), so that
// it cannot lower the branch count of a record outside its scope by
// creating and dropping branches the source never counted.
func TestCreateNamingASourceNeedsWriteAccessToIt(t *testing.T) {
	for name, open := range map[string]func(t *testing.T) driver.Driver{
		"mem": func(*testing.T) driver.Driver { return mem.NewStore().Open() },
		"dynamodb": func(t *testing.T) driver.Driver {
			ctx := context.Background()
			table := "ns-branchscope-" + testenv.RandomHex(4)
			d, err := dynamodb.Open(ctx, dynamodb.Config{Table: table, Region: "us-east-1",
				Endpoint: testenv.DynamoDBEndpoint(t), Credentials: testenv.Credentials})
			Must(t, err)
			Must(t, d.Provision(ctx))
			testenv.DropTable(t, d.Client(), table)
			return d
		},
	} {
		t.Run(name, func(t *testing.T) {
			a, err := auth.NewAuthenticator(auth.Config{Tokens: []auth.TokenEntry{
				{Name: "t1-writer", SHA256: auth.HashToken("secret-t1"), Read: []string{"t1/"}, Write: []string{"t1/"}},
				{Name: "feature", SHA256: auth.HashToken("secret-feature"), Read: []string{"t1/db:feature"}, Write: []string{"t1/db:feature"}},
				{Name: "t1-reader", SHA256: auth.HashToken("secret-t1-reader"), Read: []string{"t1/"}, Write: []string{"t1/db:feature"}},
			}})
			Must(t, err)
			s := StartOn(t, open(t), server.Options{Auth: a})
			ctx := context.Background()
			Must(t, s.NS.Init(ctx, "t1/db"))
			_, err = s.NS.PublishCommit(ctx, "t1/db", 3, "c3")
			Must(t, err)
			s.Token = "secret-t1"
			if st, b := s.Call(t, "POST", "/ns/v1/branches/t1/db:dev", `{}`); st != 201 {
				t.Fatalf("create dev: %d %s", st, b)
			}
			branch := `{"id":"t1/db:feature","kind":"ledger","source_branch":"main","head":{"v":0},"index":{"v":0},` +
				`"status":{"v":1,"payload":{"state":"ready"}},"config":{"v":0}}`
			for _, c := range []struct {
				token  string
				status int
				body   string
			}{
				{"secret-feature", 404, `{"error":"not found: t1/db:main","code":"NotFound"}`},
				{"secret-t1-reader", 403, `{"error":"no write access to t1/db:main","code":"PermissionDenied"}`},
			} {
				s.Token = c.token
				WantCall(t, c.token+" creates a branch of main whole", s, "PUT", "/ns/v1/records/t1/db:feature", branch, c.status, c.body)
				if st, b := s.Call(t, "DELETE", "/ns/v1/branches/t1/db:feature", ""); st != 404 {
					t.Fatalf("%s drops it: %d %s, want 404 (never created)", c.token, st, b)
				}
			}
			if rec, err := s.NS.Lookup(ctx, "t1/db"); err != nil || rec.Branches != 1 {
				t.Fatalf("t1/db: %v %v, want 1 branch (dev)", rec, err)
			}
			// A writer of the source may (an import of a branch).
			s.Token = "secret-t1"
			if st, b := s.Call(t, "PUT", "/ns/v1/records/t1/db:feature", branch); st != 201 {
				t.Fatalf("the source's writer creates the branch whole: %d %s", st, b)
			}
		})
	}
}
