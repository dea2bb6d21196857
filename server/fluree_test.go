package server_test

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/drivers/dynamodb"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/server"
)

// The expected bodies below are the bytes serde_json writes for Fluree's
// wire types (fluree-db-nameservice NsRecord, GraphSourceRecord, RefValue;
// fluree-db-server PushRefResponse, InitResponse, NsRecordResponse,
// ErrorResponse): field names and order, null versus omitted fields.

const refs = "/v1/fluree/nameservice/refs/"

func TestFlureeInitThenCASFromUnborn(t *testing.T) {
	s := Start(t, server.Options{})
	c1, c2 := testenv.CID("c1"), testenv.CID("c2")
	st, b := s.Call(t, "POST", refs+"mydb:main/init", "")
	Want(t, "init", st, b, 200, `{"created":true}`)
	st, b = s.Call(t, "POST", refs+"mydb:main/init", "")
	Want(t, "init again", st, b, 200, `{"created":false}`)

	st, b = s.Call(t, "POST", refs+"mydb:main/commit", `{"expected":{"id":null,"t":0},"new":{"id":"`+c1+`","t":1}}`)
	Want(t, "CAS from unborn", st, b, 200, `{"status":"updated","ref":{"id":"`+c1+`","t":1}}`)

	// A stale push: the same expected value again.
	st, b = s.Call(t, "POST", refs+"mydb:main/commit", `{"expected":{"id":null,"t":0},"new":{"id":"`+c2+`","t":2}}`)
	Want(t, "stale commit", st, b, 409, `{"status":"conflict","actual":{"id":"`+c1+`","t":1}}`)

	// A commit that does not move t forward, with the right expected value.
	st, b = s.Call(t, "POST", refs+"mydb:main/commit", `{"expected":{"id":"`+c1+`","t":1},"new":{"id":"`+c2+`","t":1}}`)
	Want(t, "commit at the same t", st, b, 409, `{"status":"conflict","actual":{"id":"`+c1+`","t":1}}`)

	// The index accepts t equal to the current one.
	st, b = s.Call(t, "POST", refs+"mydb/index", `{"expected":{"id":null,"t":0},"new":{"id":"`+c1+`","t":1}}`)
	Want(t, "index", st, b, 200, `{"status":"updated","ref":{"id":"`+c1+`","t":1}}`)
	st, b = s.Call(t, "POST", refs+"mydb/index", `{"expected":{"id":"`+c1+`","t":1},"new":{"id":"`+c2+`","t":1}}`)
	Want(t, "index at the same t", st, b, 200, `{"status":"updated","ref":{"id":"`+c2+`","t":1}}`)

	st, b = s.Call(t, "GET", "/v1/fluree/storage/ns/mydb:main", "")
	Want(t, "lookup", st, b, 200, `{"ledger_id":"mydb:main","name":"mydb","branch":"main","commit_head_id":"`+c1+
		`","commit_t":1,"index_head_id":"`+c2+`","index_t":1,"retracted":false}`)
}

func TestFlureeExpectedNull(t *testing.T) {
	s := Start(t, server.Options{})
	c1 := testenv.CID("c1")
	// On an unknown alias, expected null creates the ledger.
	st, b := s.Call(t, "POST", refs+"fresh:main/commit", `{"expected":null,"new":{"id":"`+c1+`","t":1}}`)
	Want(t, "expected null, unknown alias", st, b, 200, `{"status":"updated","ref":{"id":"`+c1+`","t":1}}`)
	// On an existing one it conflicts with the current value.
	st, b = s.Call(t, "POST", refs+"fresh:main/commit", `{"new":{"id":"`+testenv.CID("c2")+`","t":2}}`)
	Want(t, "expected absent, existing alias", st, b, 409, `{"status":"conflict","actual":{"id":"`+c1+`","t":1}}`)
	// An expected value on an unknown alias: a conflict without actual.
	st, b = s.Call(t, "POST", refs+"nobody:main/commit", `{"expected":{"id":null,"t":0},"new":{"id":"`+c1+`","t":1}}`)
	Want(t, "expected value, unknown alias", st, b, 409, `{"status":"conflict"}`)
}

func TestFlureeAliasWithSlash(t *testing.T) {
	s := Start(t, server.Options{})
	c1 := testenv.CID("c1")
	st, b := s.Call(t, "POST", refs+"tenant%2Fcustomers:release%2Fv1/init", "")
	Want(t, "init encoded", st, b, 200, `{"created":true}`)
	// Fluree's own client sends the slashes unencoded: the same record.
	st, b = s.Call(t, "POST", refs+"tenant/customers:release/v1/commit", `{"expected":{"id":null,"t":0},"new":{"id":"`+c1+`","t":1}}`)
	Want(t, "commit raw slashes", st, b, 200, `{"status":"updated","ref":{"id":"`+c1+`","t":1}}`)
	st, b = s.Call(t, "GET", "/v1/fluree/storage/ns/tenant%2Fcustomers:release%2Fv1", "")
	Want(t, "lookup encoded", st, b, 200, `{"ledger_id":"tenant/customers:release/v1","name":"tenant/customers","branch":"release/v1","commit_head_id":"`+c1+
		`","commit_t":1,"index_head_id":null,"index_t":0,"retracted":false}`)
	head, err := s.NS.Head(context.Background(), "tenant/customers:release/v1")
	if err != nil || !head.Equal(nameservice.RefValue(c1, 1)) {
		t.Fatalf("head through the library = %v, %v", head, err)
	}
}

func TestFlureeErrors(t *testing.T) {
	s := Start(t, server.Options{})
	st, b := s.Call(t, "GET", "/v1/fluree/storage/ns/nobody:main", "")
	Want(t, "unknown alias", st, b, 404, `{"error":"Ledger not found","status":404,"@type":"err:api/NotFound"}`)
	s.Call(t, "POST", refs+"db/init", "")
	st, _ = s.Call(t, "POST", refs+"db/commit", `{"expected":`)
	if st != 400 {
		t.Fatalf("malformed JSON: %d, want 400", st)
	}
	st, _ = s.Call(t, "POST", refs+"db/commit", `{"expected":null}`)
	if st != 422 {
		t.Fatalf("missing new: %d, want 422", st)
	}
	st, _ = s.Call(t, "POST", refs+"db/commit", `{"new":{"id":"not-a-cid","t":1}}`)
	if st != 422 {
		t.Fatalf("new.id not a CID: %d, want 422", st)
	}
	st, _ = s.Call(t, "POST", refs+"db/commit", `{"new":{"id":"`+testenv.CID("x")+`","t":1}}`, "Content-Type", "text/plain")
	if st != 415 {
		t.Fatalf("not JSON content type: %d, want 415", st)
	}
	st, b = s.Call(t, "POST", refs+"a:b:c/commit", `{"new":{"id":"`+testenv.CID("x")+`","t":1}}`)
	if st != 400 || !strings.Contains(b, "more than one ':'") {
		t.Fatalf("invalid alias: %d %s, want 400", st, b)
	}
	st, _ = s.Call(t, "GET", refs+"db/commit", "")
	if st != 405 {
		t.Fatalf("GET on a push route: %d, want 405", st)
	}
}

// A record whose addresses are not CIDs is refused by Fluree's lookup with
// a 400 naming the record and the field (not the value), left out of the
// snapshot, and served on our routes.
func TestFlureeNotExpressible(t *testing.T) {
	s := Start(t, server.Options{})
	ctx := context.Background()
	Must(t, s.NS.Init(ctx, "files"))
	Must(t, s.NS.Init(ctx, "ok"))
	if _, err := s.NS.PublishCommit(ctx, "files", 3, "fluree:file://files/main/commit/t3.json"); err != nil {
		t.Fatal(err)
	}
	st, b := s.Call(t, "GET", "/v1/fluree/storage/ns/files", "")
	Want(t, "lookup of a file-address record", st, b, 400, `{"error":"Bad request: record files:main cannot be expressed on Fluree's wire: `+
		`its head address is not a content ID (not a CIDv1 in base32 lower case (b...)); read it on /ns/v1/records","status":400,"@type":"err:api/BadRequest"}`)
	st, b = s.Call(t, "GET", "/v1/fluree/nameservice/snapshot", "")
	Want(t, "snapshot with a file-address record", st, b, 200, `{"ledgers":[`+
		`{"ledger_id":"ok:main","name":"ok","branch":"main","commit_head_id":null,"commit_t":0,"index_head_id":null,"index_t":0,"default_context":null,"retracted":false,"config_id":null}],"graph_sources":[]}`)
	st, b = s.Call(t, "GET", "/ns/v1/records/files:main", "")
	if st != 200 || !strings.Contains(b, "fluree:file://files/main/commit/t3.json") {
		t.Fatalf("our route: %d %s", st, b)
	}
}

func TestFlureeSnapshot(t *testing.T) {
	s := Start(t, server.Options{})
	ctx := context.Background()
	c1, ctx1 := testenv.CID("c1"), testenv.CID("context")
	Must(t, s.NS.Init(ctx, "a"))
	_, err := s.NS.PublishCommit(ctx, "a", 5, c1)
	Must(t, err)
	_, err = s.NS.PushConfig(ctx, "a", nameservice.Value{}, nameservice.Value{V: 1, Payload: nameservice.Object{"default_context": ctx1, "x": "y"}})
	Must(t, err)
	Must(t, s.NS.Init(ctx, "b:dev"))
	Must(t, s.NS.Retract(ctx, "b:dev"))
	Must(t, s.NS.PublishGraphSource(ctx, "search", "db:Bm25Index", []string{"a"}, map[string]any{"k1": 1.2}))
	Must(t, s.NS.PublishGraphSource(ctx, "custom:v2", "db:FancyIndex", nil, nil))
	st, b := s.Call(t, "GET", "/v1/fluree/nameservice/snapshot", "")
	Want(t, "snapshot", st, b, 200, `{"ledgers":[`+
		`{"ledger_id":"a:main","name":"a","branch":"main","commit_head_id":"`+c1+`","commit_t":5,"index_head_id":null,"index_t":0,"default_context":"`+ctx1+`","retracted":false,"config_id":null},`+
		`{"ledger_id":"b:dev","name":"b","branch":"dev","commit_head_id":null,"commit_t":0,"index_head_id":null,"index_t":0,"default_context":null,"retracted":true,"config_id":null}],`+
		`"graph_sources":[`+
		`{"graph_source_id":"custom:v2","name":"custom","branch":"v2","source_type":{"Unknown":"f:FancyIndex"},"config":"{}","dependencies":[],"index_id":null,"index_t":0,"retracted":false},`+
		`{"graph_source_id":"search:main","name":"search","branch":"main","source_type":"Bm25","config":"{\"k1\":1.2}","dependencies":["a:main"],"index_id":null,"index_t":0,"retracted":false}]}`)
}

// A lookup carries default_context and config_id when the config has them
// (after the other fields) and leaves them out when it does not, where the
// snapshot's NsRecord has null.
func TestFlureeLookupConfigFields(t *testing.T) {
	s := Start(t, server.Options{})
	ctx := context.Background()
	c1, ctx1, cfg := testenv.CID("c1"), testenv.CID("context"), testenv.CID("config")
	Must(t, s.NS.Init(ctx, "a"))
	_, err := s.NS.PublishCommit(ctx, "a", 5, c1)
	Must(t, err)
	_, err = s.NS.PushConfig(ctx, "a", nameservice.Value{}, nameservice.Value{V: 1, Payload: nameservice.Object{"default_context": ctx1, "config_id": cfg}})
	Must(t, err)
	st, b := s.Call(t, "GET", "/v1/fluree/storage/ns/a", "")
	Want(t, "lookup with config fields", st, b, 200, `{"ledger_id":"a:main","name":"a","branch":"main","commit_head_id":"`+c1+
		`","commit_t":5,"index_head_id":null,"index_t":0,"retracted":false,"default_context":"`+ctx1+`","config_id":"`+cfg+`"}`)
	_, err = s.NS.PushConfig(ctx, "a", nameservice.Value{V: 1, Payload: nameservice.Object{"default_context": ctx1, "config_id": cfg}},
		nameservice.Value{V: 2, Payload: nameservice.Object{"config_id": cfg}})
	Must(t, err)
	st, b = s.Call(t, "GET", "/v1/fluree/storage/ns/a", "")
	Want(t, "lookup without default_context", st, b, 200, `{"ledger_id":"a:main","name":"a","branch":"main","commit_head_id":"`+c1+
		`","commit_t":5,"index_head_id":null,"index_t":0,"retracted":false,"config_id":"`+cfg+`"}`)
}

// A lookup answers for a retracted record too, with its source branch and
// branch count: Fluree's branched reads (fluree-db-nameservice
// src/branched_store.rs, build_branched_store) look up every ancestor of a
// branch through source_branch, and an ancestor retracted since still
// holds the commits before the fork.
func TestFlureeLookupRetractedAncestor(t *testing.T) {
	s := Start(t, server.Options{})
	ctx := context.Background()
	c1, c2 := testenv.CID("c1"), testenv.CID("c2")
	Must(t, s.NS.Init(ctx, "mydb"))
	_, err := s.NS.PublishCommit(ctx, "mydb", 1, c1)
	Must(t, err)
	_, err = s.NS.CreateBranch(ctx, "mydb:dev", nameservice.BranchOptions{})
	Must(t, err)
	_, err = s.NS.PublishCommit(ctx, "mydb:dev", 2, c2)
	Must(t, err)
	_, err = s.NS.CreateBranch(ctx, "mydb:feature", nameservice.BranchOptions{From: "dev"})
	Must(t, err)
	Must(t, s.NS.Retract(ctx, "mydb:dev"))
	Must(t, s.NS.Retract(ctx, "mydb:main"))
	st, b := s.Call(t, "GET", "/v1/fluree/storage/ns/mydb:feature", "")
	Want(t, "the branch", st, b, 200, `{"ledger_id":"mydb:feature","name":"mydb","branch":"feature","commit_head_id":"`+c2+
		`","commit_t":2,"index_head_id":null,"index_t":0,"retracted":false,"source_branch":"dev"}`)
	st, b = s.Call(t, "GET", "/v1/fluree/storage/ns/mydb:dev", "")
	Want(t, "its retracted source", st, b, 200, `{"ledger_id":"mydb:dev","name":"mydb","branch":"dev","commit_head_id":"`+c2+
		`","commit_t":2,"index_head_id":null,"index_t":0,"retracted":true,"source_branch":"main","branches":1}`)
	st, b = s.Call(t, "GET", "/v1/fluree/storage/ns/mydb:main", "")
	Want(t, "the retracted root", st, b, 200, `{"ledger_id":"mydb:main","name":"mydb","branch":"main","commit_head_id":"`+c1+
		`","commit_t":1,"index_head_id":null,"index_t":0,"retracted":true,"branches":1}`)
}

func TestFlureeDiscovery(t *testing.T) {
	s := Start(t, server.Options{})
	st, b := s.Call(t, "GET", "/.well-known/fluree.json", "")
	Want(t, "discovery without auth", st, b, 200, `{"version":1,"api_base_url":"/v1/fluree"}`)
}

func TestFlureeEvents(t *testing.T) {
	s := Start(t, server.Options{})
	ctx := context.Background()
	c1, c2 := testenv.CID("c1"), testenv.CID("c2")
	Must(t, s.NS.Init(ctx, "a"))
	_, err := s.NS.PublishCommit(ctx, "a", 1, c1)
	Must(t, err)
	Must(t, s.NS.Init(ctx, "gone"))
	Must(t, s.NS.Retract(ctx, "gone"))
	Must(t, s.NS.PublishGraphSource(ctx, "gs", "db:Bm25Index", []string{"a"}, map[string]any{"api_token": "s3cret", "k": 1}))

	ev := s.Stream(t, "/v1/fluree/events?all=true")
	const at = `"emitted_at":"2026-11-23T04:05:06.789+00:00"`
	wantEvent(t, ev, "event: ns-record\nid: ledger:a:main:1:0\ndata: "+
		`{"action":"ns-record","kind":"ledger","resource_id":"a:main","record":{"ledger_id":"a:main","branch":"main","commit_head_id":"`+c1+
		`","commit_t":1,"index_head_id":null,"index_t":0,"retracted":false,"source_branch":null,"branches":0},`+at+"}\n\n")
	wantEvent(t, ev, "event: ns-record\nid: graph-source:gs:main:0:"+ConfigHash(`{"api_token":"s3cret","k":1}`)+"\ndata: "+
		`{"action":"ns-record","kind":"graph-source","resource_id":"gs:main","record":{"graph_source_id":"gs:main","name":"gs","branch":"main","source_type":"f:Bm25Index",`+
		`"config":"{\"api_token\":\"[redacted]\",\"k\":1}","dependencies":["a:main"],"index_id":null,"index_t":0,"retracted":false},`+at+"}\n\n")

	// Live: a commit, then an init (nothing), then a retraction.
	_, err = s.NS.PublishCommit(ctx, "a", 2, c2)
	Must(t, err)
	wantEvent(t, ev, "event: ns-record\nid: ledger:a:main:2:0\ndata: "+
		`{"action":"ns-record","kind":"ledger","resource_id":"a:main","record":{"ledger_id":"a:main","branch":"main","commit_head_id":"`+c2+
		`","commit_t":2,"index_head_id":null,"index_t":0,"retracted":false,"source_branch":null,"branches":0},`+at+"}\n\n")
	Must(t, s.NS.Init(ctx, "quiet"))
	Must(t, s.NS.Retract(ctx, "a"))
	wantEvent(t, ev, "event: ns-retracted\nid: ledger:a:main:retracted:"+strconv.FormatInt(FixedNow.UnixMilli(), 10)+"\ndata: "+
		`{"action":"ns-retracted","kind":"ledger","resource_id":"a:main",`+at+"}\n\n")
}

// Events for a list of aliases leave out the others.
func TestFlureeEventsSelected(t *testing.T) {
	s := Start(t, server.Options{})
	ctx := context.Background()
	Must(t, s.NS.Init(ctx, "a"))
	Must(t, s.NS.Init(ctx, "b"))
	ev := s.Stream(t, "/v1/fluree/events?ledger=b:main")
	_, err := s.NS.PublishCommit(ctx, "a", 1, testenv.CID("a1"))
	Must(t, err)
	_, err = s.NS.PublishCommit(ctx, "b", 1, testenv.CID("b1"))
	Must(t, err)
	// The selected record as it is, then its commit only.
	if got := ev.Next(t); !strings.HasPrefix(got, "event: ns-record\nid: ledger:b:main:0:0\n") {
		t.Fatalf("first event %q, want b's record", got)
	}
	if got := ev.Next(t); !strings.HasPrefix(got, "event: ns-record\nid: ledger:b:main:1:0\n") {
		t.Fatalf("second event %q, want b's commit and nothing of a", got)
	}
}

func wantEvent(t *testing.T, s *SSE, want string) {
	t.Helper()
	if got := s.Next(t); got != want {
		t.Fatalf("event:\n got %q\nwant %q", got, want)
	}
}

// A Fluree client given the bare origin sends its routes under /fluree.
func TestFlureeBarePrefix(t *testing.T) {
	s := Start(t, server.Options{})
	st, b := s.Call(t, "POST", "/fluree/nameservice/refs/bare/init", "")
	Want(t, "init under /fluree", st, b, 200, `{"created":true}`)
	st, b = s.Call(t, "GET", "/fluree/storage/ns/bare", "")
	Want(t, "lookup under /fluree", st, b, 200, `{"ledger_id":"bare:main","name":"bare","branch":"main","commit_head_id":null,"commit_t":0,"index_head_id":null,"index_t":0,"retracted":false}`)
}

// An index republished at the same t with a new CID is announced: Fluree's
// event ID stays ledger:ID:commit_t:index_t, but peers must load the new
// index. The same state again (a status push) announces nothing.
func TestFlureeEventsIndexRepublishedAtSameT(t *testing.T) {
	s := Start(t, server.Options{})
	ctx := context.Background()
	i1, i2 := testenv.CID("index-1"), testenv.CID("index-2")
	Must(t, s.NS.Init(ctx, "a"))
	_, err := s.NS.PublishIndex(ctx, "a", 3, i1)
	Must(t, err)
	ev := s.Stream(t, "/v1/fluree/events?all=true")
	if got := ev.Next(t); !strings.Contains(got, `"index_head_id":"`+i1+`","index_t":3`) {
		t.Fatalf("first event %q, want the record with the first index", got)
	}
	out, err := s.NS.AdminPublishIndex(ctx, "a", 3, i2)
	if err != nil || !out.Applied {
		t.Fatalf("republish: %v %v", out, err)
	}
	if got := ev.Next(t); !strings.HasPrefix(got, "event: ns-record\nid: ledger:a:main:0:3\n") || !strings.Contains(got, `"index_head_id":"`+i2+`","index_t":3`) {
		t.Fatalf("after the republish: %q, want the record with the new index at the same t", got)
	}
	_, err = s.NS.PushStatus(ctx, "a", nameservice.StatusValue(1, "ready", nil), nameservice.StatusValue(2, "busy", nil))
	Must(t, err)
	_, err = s.NS.PublishCommit(ctx, "a", 4, testenv.CID("c4"))
	Must(t, err)
	if got := ev.Next(t); !strings.HasPrefix(got, "event: ns-record\nid: ledger:a:main:4:3\n") {
		t.Fatalf("after the commit: %q, want the commit and nothing for the status push", got)
	}
}

// A compare-and-set the backend could not take (nothing listens where the
// DynamoDB table is: the request was never sent) fails with 500, and is no
// unknown outcome: nameservice_unknown_outcomes_total counts only writes
// that may have landed.
func TestFlureeCASUnavailableIsNoUnknownOutcome(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	Must(t, err)
	closed := "http://" + ln.Addr().String()
	Must(t, ln.Close())
	d, err := dynamodb.Open(context.Background(), dynamodb.Config{Table: "gone", Region: "us-east-1", Endpoint: closed,
		Credentials: testenv.Credentials})
	Must(t, err)
	s := StartOn(t, d, server.Options{})
	st, b := s.Call(t, "POST", refs+"mydb:main/commit", `{"expected":{"id":null,"t":0},"new":{"id":"`+testenv.CID("c1")+`","t":1}}`)
	if st != 500 || !strings.Contains(b, "CAS operation failed") {
		t.Fatalf("CAS with the backend down: %d %s, want 500", st, b)
	}
	_, metrics := s.Call(t, "GET", "/metrics", "")
	if !strings.Contains(metrics, "\nnameservice_unknown_outcomes_total 0\n") {
		t.Errorf("a write never sent counted as an unknown outcome:\n%s", grepLines(metrics, "unknown_outcomes"))
	}
}
