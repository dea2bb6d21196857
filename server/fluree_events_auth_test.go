package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/server"
	"nameservice.dev/nameservice/server/auth"
)

// eventsServer serves t1/db and t2/db (each with a commit, so each is in
// the events' snapshot) to a static token reading t2/ and JWS of trusted,
// its events route in mode.
func eventsServer(t *testing.T, trusted Issuer, mode auth.EventsAuth) *Server {
	t.Helper()
	a, err := auth.NewAuthenticator(auth.Config{
		Tokens:         []auth.TokenEntry{{Name: "t2", SHA256: auth.HashToken("secret-t2"), Read: []string{"t2/"}}},
		TrustedIssuers: []string{trusted.DID},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := Start(t, server.Options{Auth: a, EventsAuth: mode})
	for _, name := range []string{"t1/db", "t2/db"} {
		Must(t, s.NS.Init(context.Background(), name))
		_, err := s.NS.PublishCommit(context.Background(), name, 1, testenv.CID(name))
		Must(t, err)
	}
	return s
}

// firstEvents opens the events route as token (none when empty) and returns
// its status and, for a stream, the IDs of the first n records it sends
// (in their order, t1/db before t2/db: a stream that starts with t2/db has
// left t1/db out).
func firstEvents(t *testing.T, s *Server, token, query string, n int) (int, []string) {
	t.Helper()
	s.Token = token
	resp := s.Do(t, "GET", "/v1/fluree/events?"+query, "", "Accept", "text/event-stream")
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil
	}
	ev := NewSSE(resp)
	var ids []string
	for len(ids) < n {
		e := ev.Next(t)
		if !strings.HasPrefix(e, "event: ns-record") {
			continue // a keep-alive
		}
		id, _, _ := strings.Cut(strings.SplitN(e, "\n", 3)[1], ":main:")
		ids = append(ids, strings.TrimPrefix(id, "id: ledger:"))
	}
	return http.StatusOK, ids
}

// The events route offers Fluree's three modes: required (a valid token,
// filtered by its grants), optional (a token is checked and filters when
// given; without one every record), none (tokens ignored, every record).
// The other routes need a token in every mode.
func TestEventsAuthModes(t *testing.T) {
	trusted := NewIssuer(t)
	t2Only := trusted.Token(t, trusted.Claims(map[string]any{"fluree.events.ledgers": []string{"t2/db"}}))
	stranger := NewIssuer(t)
	untrusted := stranger.Token(t, stranger.Claims(map[string]any{"fluree.events.all": true}))
	both := []string{"t1/db", "t2/db"}
	for _, c := range []struct {
		mode                       auth.EventsAuth
		anonymous, invalid, scoped []string // nil: 401
	}{
		{auth.EventsAuthRequired, nil, nil, []string{"t2/db"}},
		{auth.EventsAuthOptional, both, nil, []string{"t2/db"}},
		{auth.EventsAuthNone, both, both, both},
	} {
		s := eventsServer(t, trusted, c.mode)
		for _, tc := range []struct {
			who, token string
			want       []string
		}{{"anonymous", "", c.anonymous}, {"untrusted token", untrusted, c.invalid}, {"scoped JWS", t2Only, c.scoped}} {
			st, ids := firstEvents(t, s, tc.token, "all=true", len(tc.want))
			switch {
			case tc.want == nil && st != http.StatusUnauthorized:
				t.Errorf("%s, %s: %d %v, want 401", c.mode, tc.who, st, ids)
			case tc.want != nil && (st != http.StatusOK || strings.Join(ids, " ") != strings.Join(tc.want, " ")):
				t.Errorf("%s, %s: %d %v, want 200 %v", c.mode, tc.who, st, ids, tc.want)
			}
		}
		// The static token sees its read scope, unless tokens are ignored.
		want := "t2/db"
		if c.mode == auth.EventsAuthNone {
			want = "t1/db"
		}
		if st, ids := firstEvents(t, s, "secret-t2", "all=true", 1); st != http.StatusOK || ids[0] != want {
			t.Errorf("%s, static token: %d %v, want %s first", c.mode, st, ids, want)
		}
		// Every other route still needs a token.
		s.Token = ""
		for _, path := range []string{"/v1/fluree/storage/ns/t1%2Fdb:main", "/v1/fluree/nameservice/snapshot", "/ns/v1/watch", "/ns/v1/records"} {
			if st, _ := s.Call(t, "GET", path, ""); st != http.StatusUnauthorized {
				t.Errorf("%s: %s without a token: %d, want 401", c.mode, path, st)
			}
		}
	}
}

func TestParseEventsAuth(t *testing.T) {
	for _, m := range []auth.EventsAuth{auth.EventsAuthRequired, auth.EventsAuthOptional, auth.EventsAuthNone} {
		if got, err := auth.ParseEventsAuth(m.String()); err != nil || got != m {
			t.Errorf("ParseEventsAuth(%q) = %v, %v", m, got, err)
		}
	}
	if _, err := auth.ParseEventsAuth("Required"); err == nil {
		t.Error("ParseEventsAuth accepted Required")
	}
}
