package server_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/server"
)

func TestAuthMissingMalformedWrong(t *testing.T) {
	s := AuthServer(t, NewIssuer(t))
	for _, c := range []struct{ name, header string }{
		{"missing", ""}, {"not bearer", "Basic c2VjcmV0LXQxOg=="}, {"empty bearer", "Bearer "},
		{"wrong token", "Bearer secret-t3"}, {"garbage JWS", "Bearer a.b.c"},
	} {
		for _, path := range []string{"/ns/v1/records/t1/db:main", "/v1/fluree/storage/ns/t1%2Fdb:main"} {
			st, b := s.Call(t, "GET", path, "", "Authorization", c.header)
			if st != http.StatusUnauthorized {
				t.Fatalf("%s on %s: %d %s, want 401", c.name, path, st, b)
			}
			if strings.Contains(b, "secret") {
				t.Fatalf("%s: the answer repeats the token: %s", c.name, b)
			}
		}
	}
	// Health and discovery need no token.
	if st, _ := s.Call(t, "GET", "/healthz", ""); st != 200 {
		t.Fatalf("healthz: %d", st)
	}
	st, b := s.Call(t, "GET", "/.well-known/fluree.json", "")
	Want(t, "discovery with auth", st, b, 200, `{"version":1,"api_base_url":"/v1/fluree","auth":{"type":"token"}}`)
}

func TestAuthStaticScopes(t *testing.T) {
	s := AuthServer(t, NewIssuer(t))
	s.Token = "secret-t1"
	if st, b := s.Call(t, "GET", "/ns/v1/records/t1/db:main", ""); st != 200 {
		t.Fatalf("in scope: %d %s", st, b)
	}
	// Out of scope and missing answer alike: no existence leak.
	stOut, bOut := s.Call(t, "GET", "/ns/v1/records/t2/db:main", "")
	stMissing, bMissing := s.Call(t, "GET", "/ns/v1/records/t2/nothing:main", "")
	if stOut != 404 || stMissing != 404 || strings.Replace(bOut, "t2/db", "t2/nothing", 1) != bMissing {
		t.Fatalf("out of scope %d %s; missing %d %s", stOut, bOut, stMissing, bMissing)
	}
	WantCall(t, "fluree out of scope", s, "GET", "/v1/fluree/storage/ns/t2%2Fdb", "", 404,
		`{"error":"Ledger not found","status":404,"@type":"err:api/NotFound"}`)
	// The listing holds only the scope.
	st, b := s.Call(t, "GET", "/ns/v1/records", "")
	if st != 200 || strings.Contains(b, "t2/") || !strings.Contains(b, "t1/db") {
		t.Fatalf("list: %d %s", st, b)
	}
	// Writes outside the scope: 404; a reader's write: 403.
	push := `{"condition":"above","new":{"v":1,"payload":{"address":"a","t":1}}}`
	if st, _ := s.Call(t, "POST", "/ns/v1/push/head/t2/db:main", push); st != 404 {
		t.Fatalf("write out of scope: %d", st)
	}
	if st, _ := s.Call(t, "POST", "/ns/v1/push/head/t1/db:main", push); st != 200 {
		t.Fatalf("write in scope: %d", st)
	}
	s.Token = "secret-reader"
	if st, _ := s.Call(t, "POST", "/ns/v1/push/head/t1/db:main", push); st != 403 {
		t.Fatalf("reader's write: %d, want 403", st)
	}
}

// A watch shows only the records in scope.
func TestAuthWatchScope(t *testing.T) {
	s := AuthServer(t, NewIssuer(t))
	s.Token = "secret-t1"
	ev := s.Stream(t, "/ns/v1/watch")
	var names []string
	for {
		e := ev.Next(t)
		if strings.HasPrefix(e, "event: synced") {
			break
		}
		names = append(names, e)
	}
	if len(names) != 2 || strings.Contains(strings.Join(names, ""), "t2/") {
		t.Fatalf("snapshot events %q, want t1's two records", names)
	}
	ctx := context.Background()
	_, err := s.NS.PublishCommit(ctx, "t2/db", 1, "x")
	Must(t, err)
	_, err = s.NS.PublishCommit(ctx, "t1/db", 1, "y")
	Must(t, err)
	if e := ev.Next(t); !strings.Contains(e, `"id":"t1/db:main"`) {
		t.Fatalf("first change %q, want t1's (t2's is out of scope)", e)
	}
}

func TestAuthJWS(t *testing.T) {
	trusted, stranger := NewIssuer(t), NewIssuer(t)
	s := AuthServer(t, trusted)
	c1 := testenv.CID("c1")
	cas := `{"expected":{"id":null,"t":0},"new":{"id":"` + c1 + `","t":1}}`

	s.Token = trusted.Token(t, trusted.Claims(map[string]any{"fluree.storage.ledgers": []string{"t1/db"}}))
	WantCall(t, "JWS in scope", s, "POST", "/v1/fluree/nameservice/refs/t1%2Fdb:main/commit", cas, 200,
		`{"status":"updated","ref":{"id":"`+c1+`","t":1}}`)
	WantCall(t, "JWS out of scope", s, "POST", "/v1/fluree/nameservice/refs/t2%2Fdb:main/commit", cas, 404,
		`{"error":"Ledger not found","status":404,"@type":"err:api/NotFound"}`)
	st, b := s.Call(t, "GET", "/v1/fluree/nameservice/snapshot", "")
	if st != 200 || !strings.Contains(b, `"t1/db:main"`) || strings.Contains(b, "t2/") || !strings.Contains(b, `"graph_sources":[]`) {
		t.Fatalf("scoped snapshot: %d %s", st, b)
	}

	s.Token = trusted.Token(t, trusted.Claims(map[string]any{"fluree.storage.all": true}))
	st, b = s.Call(t, "GET", "/v1/fluree/nameservice/snapshot", "")
	if st != 200 || !strings.Contains(b, "t2/db") || !strings.Contains(b, "t1/search") {
		t.Fatalf("storage.all snapshot: %d %s", st, b)
	}

	refused := map[string]string{
		"expired":        trusted.Token(t, trusted.Claims(map[string]any{"fluree.storage.all": true, "exp": time.Now().Add(-2 * time.Minute).Unix()})),
		"no exp":         trusted.Token(t, map[string]any{"iss": trusted.DID, "fluree.storage.all": true}),
		"wrong issuer":   stranger.Token(t, stranger.Claims(map[string]any{"fluree.storage.all": true})),
		"iss mismatch":   stranger.Token(t, map[string]any{"iss": trusted.DID, "exp": time.Now().Add(time.Hour).Unix(), "fluree.storage.all": true}),
		"not yet valid":  trusted.Token(t, trusted.Claims(map[string]any{"fluree.storage.all": true, "nbf": time.Now().Add(time.Hour).Unix()})),
		"tampered":       tamper(trusted.Token(t, trusted.Claims(map[string]any{"fluree.storage.ledgers": []string{"t1/db"}}))),
		"malformed JWS":  "eyJhbGciOiJFZERTQSJ9.e30.AAAA",
		"three garbage":  "x.y.z",
		"static as JWS!": "secret.t1.x",
	}
	for name, tok := range refused {
		s.Token = tok
		st, b := s.Call(t, "GET", "/v1/fluree/storage/ns/t1%2Fdb", "")
		if st != 401 || !strings.Contains(b, `"@type":"err:policy/Unauthorized"`) {
			t.Errorf("%s: %d %s, want 401", name, st, b)
		}
	}
}

// tamper swaps the token's payload for one granting everything, keeping
// the signature.
func tamper(tok string) string {
	parts := strings.Split(tok, ".")
	parts[1] = "eyJmbHVyZWUuc3RvcmFnZS5hbGwiOnRydWV9"
	return strings.Join(parts, ".")
}

func TestAuthEventsClaims(t *testing.T) {
	trusted := NewIssuer(t)
	s := AuthServer(t, trusted)
	s.Token = trusted.Token(t, trusted.Claims(map[string]any{"fluree.events.ledgers": []string{"t2/db"}}))
	ev := s.Stream(t, "/v1/fluree/events?all=true")
	if e := ev.Next(t); !strings.Contains(e, "id: ledger:t2/db:main:0:0\n") {
		t.Fatalf("first event %q, want t2/db's record only", e)
	}
	_, err := s.NS.PublishCommit(context.Background(), "t1/db", 1, testenv.CID("a"))
	Must(t, err)
	_, err = s.NS.PublishCommit(context.Background(), "t2/db", 1, testenv.CID("b"))
	Must(t, err)
	if e := ev.Next(t); !strings.Contains(e, "id: ledger:t2/db:main:1:0\n") {
		t.Fatalf("next event %q, want t2/db's commit (t1/db is out of the claims)", e)
	}
}

func TestOversizeBody(t *testing.T) {
	s := AuthServer(t, NewIssuer(t))
	s.Token = "secret-t1"
	big := `{"condition":"above","new":{"v":1,"payload":{"address":"` + strings.Repeat("a", 8000) + `","t":1}}}`
	if st, b := s.Call(t, "POST", "/ns/v1/push/head/t1/db:main", big); st != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversize push: %d %s, want 413", st, b)
	}
}

// A client that never finishes its headers is cut off after
// ReadHeaderTimeout.
func TestSlowHeadersCutOff(t *testing.T) {
	s := Start(t, server.Options{})
	hs := s.Srv.HTTPServer(server.Limits{ReadHeaderTimeout: 300 * time.Millisecond})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")); err != nil {
		t.Fatal(err)
	}
	// Any cut-off well before the default timeout is this one's: a loaded
	// machine may be late, but not by seconds.
	limit := server.DefaultReadHeaderTimeout / 2
	start := time.Now()
	_ = conn.SetReadDeadline(time.Now().Add(limit))
	buf := make([]byte, 512)
	for {
		if _, err := conn.Read(buf); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatal("the server kept a connection whose headers never finished")
			}
			break // closed by the server
		}
	}
	if d := time.Since(start); d >= limit {
		t.Fatalf("cut off after %v, want about 300ms", d)
	}
}

// A client that sends its headers and then trickles its body is cut off
// after BodyTimeout.
func TestSlowBodyCutOff(t *testing.T) {
	s := Start(t, server.Options{BodyTimeout: 300 * time.Millisecond})
	Must(t, s.NS.Init(context.Background(), "db"))
	hs := s.Srv.HTTPServer(server.Limits{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = conn.Write([]byte("POST /ns/v1/push/head/db:main HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"condition\":"))
	if err != nil {
		t.Fatal(err)
	}
	limit := server.DefaultBodyTimeout / 2 // see TestSlowHeadersCutOff
	start := time.Now()
	_ = conn.SetReadDeadline(time.Now().Add(limit))
	b, err := io.ReadAll(conn)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the server kept waiting for a body that never came")
	}
	if d := time.Since(start); d >= limit {
		t.Fatalf("cut off after %v, want about 300ms", d)
	}
	if len(b) > 0 && !strings.Contains(string(b), " 400 ") {
		t.Fatalf("answer to a cut-off body: %q", b)
	}
}

// Claims are read as Fluree's server reads them: exact names, no repeated
// name, times as unsigned integers compared without overflow; a token
// whose claims grant nothing on a route is refused there with 401.
func TestAuthJWSClaimsStrict(t *testing.T) {
	trusted := NewIssuer(t)
	s := AuthServer(t, trusted)
	exp := time.Now().Add(time.Hour).Unix()
	head := `{"iss":"` + trusted.DID + `","exp":` + itoa(exp)
	refused := map[string]string{
		"nbf 2^63-1":           head + `,"nbf":9223372036854775807,"fluree.storage.all":true}`,
		"iat 2^63-1":           head + `,"iat":9223372036854775807,"fluree.storage.all":true}`,
		"nbf 2^64-1":           head + `,"nbf":18446744073709551615,"fluree.storage.all":true}`,
		"negative exp":         `{"iss":"` + trusted.DID + `","exp":-1,"fluree.storage.all":true}`,
		"exp beyond u64":       `{"iss":"` + trusted.DID + `","exp":18446744073709551616,"fluree.storage.all":true}`,
		"fractional exp":       `{"iss":"` + trusted.DID + `","exp":` + itoa(exp) + `.5,"fluree.storage.all":true}`,
		"case-variant claim":   head + `,"Fluree.Storage.All":true}`,
		"case-variant exp":     `{"iss":"` + trusted.DID + `","EXP":` + itoa(exp) + `,"fluree.storage.all":true}`,
		"case-variant iss":     `{"ISS":"` + trusted.DID + `","exp":` + itoa(exp) + `,"fluree.storage.all":true}`,
		"repeated claim":       head + `,"fluree.storage.ledgers":["t1/db"],"fluree.storage.ledgers":["t2/db"]}`,
		"repeated exp":         head + `,"exp":99999999999,"fluree.storage.all":true}`,
		"repeated, both equal": head + `,"fluree.storage.all":true,"fluree.storage.all":true}`,
		"no claims":            head + `}`,
		"events claims only":   head + `,"fluree.events.all":true}`,
		"invalid ledger only":  head + `,"fluree.storage.ledgers":["not a ledger!:"]}`,
	}
	for name, payload := range refused {
		s.Token = trusted.RawToken(t, payload)
		for _, path := range []string{"/v1/fluree/storage/ns/t2%2Fdb:main", "/v1/fluree/nameservice/snapshot", "/ns/v1/records", "/ns/v1/records/t2/db:main"} {
			if st, b := s.Call(t, "GET", path, ""); st != http.StatusUnauthorized {
				t.Errorf("%s on %s: %d %s, want 401", name, path, st, b)
			}
		}
	}
	// The events route asks for the events claims.
	s.Token = trusted.RawToken(t, head+`,"fluree.storage.all":true}`)
	resp := s.Do(t, "GET", "/v1/fluree/events?all=true", "")
	resp.Body.Close() // a stream, if the server wrongly opened one
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("storage claims only on the events route: %d, want 401", resp.StatusCode)
	}
	// The same claims, well formed, are accepted: the refusals above are
	// the claims' form, not the key.
	for name, payload := range map[string]string{
		"exp 2^63-1":  `{"iss":"` + trusted.DID + `","exp":9223372036854775807,"fluree.storage.all":true}`,
		"exp 2^64-1":  `{"iss":"` + trusted.DID + `","exp":18446744073709551615,"fluree.storage.all":true}`,
		"nbf and iat": head + `,"nbf":` + itoa(time.Now().Unix()) + `,"iat":` + itoa(time.Now().Unix()) + `,"fluree.storage.all":true}`,
		"unknown":     head + `,"fluree.storage.all":true,"x-other":{"Exp":1,"exp":2}}`,
	} {
		s.Token = trusted.RawToken(t, payload)
		if st, b := s.Call(t, "GET", "/v1/fluree/storage/ns/t2%2Fdb:main", ""); st != http.StatusOK {
			t.Errorf("%s: %d %s, want 200", name, st, b)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
