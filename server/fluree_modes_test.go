package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/server"
	"nameservice.dev/nameservice/server/auth"
)

// The tests of this file send the requests of the Fluree components that
// docs/serve.md says can use the server, as those components send them
// (fluree/db v4.1.6), and read the answers as they read them: the field
// each needs, the status codes each treats as success. Each test is one
// mode the documentation claims.

// flureeRef is Fluree's RefValue.
type flureeRef struct {
	ID *string `json:"id"`
	T  int64   `json:"t"`
}

// nsRecord is Fluree's NsRecord as serde reads it: the pointer fields are
// required (serde fails without them), the others default.
type nsRecord struct {
	LedgerID     *string `json:"ledger_id"`
	Name         *string `json:"name"`
	Branch       *string `json:"branch"`
	CommitHeadID *string `json:"commit_head_id"`
	CommitT      *int64  `json:"commit_t"`
	IndexHeadID  *string `json:"index_head_id"`
	IndexT       *int64  `json:"index_t"`
	Retracted    *bool   `json:"retracted"`
}

func (r *nsRecord) check(t *testing.T) {
	t.Helper()
	if r.LedgerID == nil || r.Name == nil || r.Branch == nil || r.CommitT == nil || r.IndexT == nil || r.Retracted == nil {
		t.Fatalf("an NsRecord lacks a field serde requires: %+v", r)
	}
}

// syncClient sends the requests of Fluree's HttpRemoteClient
// (fluree-db-nameservice-sync), which `fluree fetch` and the sync driver's
// fetch, pull and push of refs use: "/fluree" appended to a base URL that
// does not end with it, ledger IDs put in paths as they are (a '/' in a
// name unencoded), a JSON body for pushes, no body for init.
type syncClient struct {
	t           *testing.T
	base, token string
}

func newSyncClient(t *testing.T, base, token string) *syncClient {
	base = strings.TrimRight(base, "/")
	if !strings.HasSuffix(base, "/fluree") {
		base += "/fluree"
	}
	return &syncClient{t: t, base: base, token: token}
}

func (c *syncClient) do(method, path string, body any) (int, []byte) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp.StatusCode, b
}

// initLedger is init_ledger: any 2xx, then {"created": bool}.
func (c *syncClient) initLedger(id string) bool {
	c.t.Helper()
	st, b := c.do("POST", "/nameservice/refs/"+id+"/init", nil)
	var r struct {
		Created *bool `json:"created"`
	}
	if st/100 != 2 || json.Unmarshal(b, &r) != nil || r.Created == nil {
		c.t.Fatalf("init %s: %d %s", id, st, b)
	}
	return *r.Created
}

// pushRef is push_ref: 200 is updated, 409 a conflict whose body holds
// actual (absent: no current value); anything else an error.
func (c *syncClient) pushRef(id, kind string, expected *flureeRef, next flureeRef) (bool, *flureeRef) {
	c.t.Helper()
	st, b := c.do("POST", "/nameservice/refs/"+id+"/"+kind, map[string]any{"expected": expected, "new": next})
	switch st {
	case 200:
		return true, nil
	case 409:
		var r struct {
			Status string     `json:"status"`
			Actual *flureeRef `json:"actual"`
		}
		if err := json.Unmarshal(b, &r); err != nil || r.Status == "" {
			c.t.Fatalf("push %s %s: 409 %s", id, kind, b)
		}
		return false, r.Actual
	}
	c.t.Fatalf("push %s %s: %d %s", id, kind, st, b)
	return false, nil
}

// lookup is lookup: 200 an NsRecord, 404 none.
func (c *syncClient) lookup(id string) *nsRecord {
	c.t.Helper()
	st, b := c.do("GET", "/storage/ns/"+id, nil)
	if st == 404 {
		return nil
	}
	var r nsRecord
	if st != 200 || json.Unmarshal(b, &r) != nil {
		c.t.Fatalf("lookup %s: %d %s", id, st, b)
	}
	r.check(c.t)
	return &r
}

// snapshot is snapshot: a 2xx RemoteSnapshot (graph_sources may be absent).
func (c *syncClient) snapshot() map[string]nsRecord {
	c.t.Helper()
	st, b := c.do("GET", "/nameservice/snapshot", nil)
	var r struct {
		Ledgers []nsRecord `json:"ledgers"`
	}
	if st/100 != 2 || json.Unmarshal(b, &r) != nil || r.Ledgers == nil {
		c.t.Fatalf("snapshot: %d %s", st, b)
	}
	out := map[string]nsRecord{}
	for _, l := range r.Ledgers {
		l.check(c.t)
		out[*l.LedgerID] = l
	}
	return out
}

func ref(id string, t int64) flureeRef { return flureeRef{ID: &id, T: t} }

// Mode: a program using fluree-db-nameservice-sync's HttpRemoteClient and
// SyncDriver (and the `fluree fetch` command): fetch (snapshot), lookup,
// init, and the compare-and-set pushes of refs, with a base URL given as
// the bare origin or as .../v1/fluree, with a Fluree JWS carrying
// fluree.storage claims (what `fluree fetch` asks for) or a static token.
func TestFlureeModeSyncClient(t *testing.T) {
	trusted := NewIssuer(t)
	s := AuthServer(t, trusted)
	jws := trusted.Token(t, trusted.Claims(map[string]any{"fluree.storage.all": true}))
	for _, c := range []struct{ base, token, ledger string }{
		{s.URL, jws, "t1/sync-a:main"},
		{s.URL + "/v1/fluree", jws, "t1/sync-b:main"},
		{s.URL + "/", "secret-t1", "t1/sync-c:main"},
	} {
		cl := newSyncClient(t, c.base, c.token)
		// push_tracked to a remote without the ledger: expected null.
		if ok, actual := cl.pushRef(c.ledger, "commit", nil, ref(testenv.CID(c.ledger+"1"), 1)); !ok {
			t.Fatalf("%s: first push refused, actual %v", c.base, actual)
		}
		// fetch_remote: the snapshot holds it; the tracking ref is its head.
		rec, ok := cl.snapshot()[c.ledger]
		if !ok || *rec.CommitT != 1 || *rec.CommitHeadID != testenv.CID(c.ledger+"1") {
			t.Fatalf("%s: snapshot record %+v", c.base, rec)
		}
		tracking := ref(*rec.CommitHeadID, *rec.CommitT)
		if ok, _ := cl.pushRef(c.ledger, "commit", &tracking, ref(testenv.CID(c.ledger+"2"), 2)); !ok {
			t.Fatalf("%s: push from the tracking ref refused", c.base)
		}
		// A push from a stale tracking ref is rejected with the remote's.
		ok, actual := cl.pushRef(c.ledger, "commit", &tracking, ref(testenv.CID(c.ledger+"3"), 3))
		if ok || actual == nil || actual.T != 2 {
			t.Fatalf("%s: stale push: %v %v", c.base, ok, actual)
		}
		// push_tracked's best-effort index push: the tracking ref of an
		// unindexed ledger is none, and the remote's unborn index is a
		// value ({"id": null, "t": 0}), so expected null conflicts, as on a
		// Fluree server; from the unborn value it is applied.
		if ok, actual := cl.pushRef(c.ledger, "index", nil, ref(testenv.CID(c.ledger+"i"), 2)); ok || actual == nil || actual.ID != nil || actual.T != 0 {
			t.Fatalf("%s: index push expecting none: %v %+v", c.base, ok, actual)
		}
		if ok, _ := cl.pushRef(c.ledger, "index", &flureeRef{T: 0}, ref(testenv.CID(c.ledger+"i"), 2)); !ok {
			t.Fatalf("%s: index push refused", c.base)
		}
		if r := cl.lookup(c.ledger); r == nil || *r.CommitT != 2 || *r.IndexT != 2 {
			t.Fatalf("%s: lookup %+v", c.base, r)
		}
		if r := cl.lookup("t1/nothing:main"); r != nil {
			t.Fatalf("%s: lookup of an unknown ledger: %+v", c.base, r)
		}
		if !cl.initLedger(c.ledger+"-new") || cl.initLedger(c.ledger+"-new") {
			t.Fatalf("%s: init did not answer created, then not", c.base)
		}
	}
}

// peerRecord is fluree-db-peer's LedgerRecord, what a peer reads of an
// ns-record event: the pointer fields are required.
type peerRecord struct {
	LedgerID     *string `json:"ledger_id"`
	CommitHeadID *string `json:"commit_head_id"`
	CommitT      *int64  `json:"commit_t"`
	IndexHeadID  *string `json:"index_head_id"`
	IndexT       *int64  `json:"index_t"`
}

// peerSubscribe opens the events route as a Fluree peer does
// (PeerSubscriptionTask): GET {events URL}?all=true, or ?ledger=<encoded>
// per --peer-ledger, Accept: text/event-stream, its --peer-events-token
// if any. It returns the status and, on 200, an event reader.
func peerSubscribe(t *testing.T, s *Server, token string, ledgers ...string) (int, *SSE) {
	t.Helper()
	q := "all=true"
	if len(ledgers) > 0 {
		var parts []string
		for _, l := range ledgers {
			parts = append(parts, "ledger="+url.QueryEscape(l))
		}
		q = strings.Join(parts, "&")
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+"/v1/fluree/events?"+q, nil)
	req.Header.Set("Accept", "text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 {
		return resp.StatusCode, nil
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("events: Content-Type %q", ct)
	}
	return 200, NewSSE(resp)
}

// nextLedgerEvent reads the next ns-record event as a peer does.
func nextLedgerEvent(t *testing.T, ev *SSE) peerRecord {
	t.Helper()
	for {
		e := ev.Next(t)
		if !strings.HasPrefix(e, "event: ns-record\n") {
			continue
		}
		_, data, _ := strings.Cut(e, "\ndata: ")
		var d struct {
			Kind   string     `json:"kind"`
			Record peerRecord `json:"record"`
		}
		if err := json.Unmarshal([]byte(data), &d); err != nil || d.Kind != "ledger" {
			t.Fatalf("ns-record %q: %v", e, err)
		}
		r := d.Record
		if r.LedgerID == nil || r.CommitT == nil || r.IndexT == nil {
			t.Fatalf("ns-record lacks a field the peer requires: %q", e)
		}
		return r
	}
}

// Mode: a Fluree peer with shared storage access subscribed to this
// server's events (--peer-events-url .../v1/fluree/events), in each events
// auth mode, with the token kinds a peer may hold (--peer-events-token):
// the snapshot, then each published commit. In required mode a peer
// without a token gets 401, which a peer treats as fatal.
func TestFlureeModePeerSubscription(t *testing.T) {
	trusted := NewIssuer(t)
	peerJWS := trusted.Token(t, trusted.Claims(map[string]any{"sub": "peer-1", "fluree.events.all": true}))
	for _, c := range []struct {
		mode   auth.EventsAuth
		tokens []string // the tokens a peer may hold in this mode; "" none
	}{
		{auth.EventsAuthRequired, []string{peerJWS, "secret-t2"}},
		{auth.EventsAuthOptional, []string{"", peerJWS}},
		{auth.EventsAuthNone, []string{""}},
	} {
		s := eventsServer(t, trusted, c.mode)
		head, at := testenv.CID("t2/db"), int64(1)
		for i, tok := range c.tokens {
			st, ev := peerSubscribe(t, s, tok, "t2/db:main")
			if st != 200 {
				t.Fatalf("%s, token %d: %d", c.mode, i, st)
			}
			if r := nextLedgerEvent(t, ev); *r.LedgerID != "t2/db:main" || *r.CommitT != at || *r.CommitHeadID != head {
				t.Fatalf("%s, token %d: snapshot record %+v", c.mode, i, r)
			}
			head, at = testenv.CID(head), at+1
			_, err := s.NS.PublishCommit(context.Background(), "t2/db", at, head)
			Must(t, err)
			if r := nextLedgerEvent(t, ev); *r.CommitT != at || *r.CommitHeadID != head {
				t.Fatalf("%s, token %d: live record %+v", c.mode, i, r)
			}
		}
		if c.mode == auth.EventsAuthRequired {
			if st, _ := peerSubscribe(t, s, ""); st != http.StatusUnauthorized {
				t.Fatalf("required, a peer without a token: %d, want 401", st)
			}
		}
	}
}

// Not served: the routes of the Fluree modes the documentation says do not
// work (a proxy-storage peer's blocks, pull/clone's packs and objects, push
// and transactions) answer 404, so those clients fail at once.
func TestFlureeUnservedRoutes(t *testing.T) {
	s := Start(t, server.Options{})
	for _, r := range []string{
		"POST /v1/fluree/storage/block", "POST /v1/fluree/pack/db:main", "POST /v1/fluree/push/db:main",
		"GET /v1/fluree/info/db:main", "GET /v1/fluree/storage/objects/x", "POST /v1/fluree/transact",
		"POST /v1/fluree/query",
	} {
		method, path, _ := strings.Cut(r, " ")
		if st, _ := s.Call(t, method, path, ""); st != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", r, st)
		}
	}
}
