package server_test

import (
	"context"
	"net/http"
	"testing"

	"nameservice.dev/nameservice/server"
	"nameservice.dev/nameservice/server/auth"
)

// streamStatus opens a stream as token and returns its status, leaving a
// 200 stream open until the test ends.
func streamStatus(t *testing.T, s *Server, token, path string) int {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
	} else {
		t.Cleanup(func() { resp.Body.Close() })
	}
	return resp.StatusCode
}

// One principal holds at most MaxStreamsPerPrincipal streams, on both
// stream routes together; the others still get theirs. Principals are
// static tokens, and a JWS issuer's subjects one by one.
func TestStreamsPerPrincipal(t *testing.T) {
	trusted := NewIssuer(t)
	a, err := auth.NewAuthenticator(auth.Config{
		Tokens: []auth.TokenEntry{
			{Name: "greedy", SHA256: auth.HashToken("greedy"), Read: []string{""}},
			{Name: "other", SHA256: auth.HashToken("other"), Read: []string{""}},
		},
		TrustedIssuers: []string{trusted.DID},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := Start(t, server.Options{Auth: a, MaxStreamsPerPrincipal: 3, MaxStreams: 100})
	for i, path := range []string{"/ns/v1/watch", "/v1/fluree/events?all=true", "/ns/v1/watch"} {
		if st := streamStatus(t, s, "greedy", path); st != http.StatusOK {
			t.Fatalf("greedy's stream %d: %d", i+1, st)
		}
	}
	if st := streamStatus(t, s, "greedy", "/v1/fluree/events?all=true"); st != http.StatusTooManyRequests {
		t.Fatalf("greedy's 4th stream: %d, want 429", st)
	}
	if st := streamStatus(t, s, "other", "/ns/v1/watch"); st != http.StatusOK {
		t.Fatalf("another token's stream: %d", st)
	}
	tok := func(sub string) string {
		return trusted.Token(t, trusted.Claims(map[string]any{"sub": sub, "fluree.events.all": true}))
	}
	for i := range 3 {
		if st := streamStatus(t, s, tok("peer-1"), "/v1/fluree/events?all=true"); st != http.StatusOK {
			t.Fatalf("peer-1's stream %d: %d", i+1, st)
		}
	}
	if st := streamStatus(t, s, tok("peer-1"), "/v1/fluree/events?all=true"); st != http.StatusTooManyRequests {
		t.Fatalf("peer-1's 4th stream (a fresh token): %d, want 429", st)
	}
	if st := streamStatus(t, s, tok("peer-2"), "/v1/fluree/events?all=true"); st != http.StatusOK {
		t.Fatalf("peer-2's stream: %d", st)
	}
	if v := metricValue(t, s, `nameservice_sse_refused_total{reason="max_streams_per_principal"}`); v != "2" {
		t.Fatalf("refusals counted: %q, want 2", v)
	}
}

// A principal's slots come back when its streams end.
func TestStreamsPerPrincipalReleased(t *testing.T) {
	s := rootServer(t, server.Options{MaxStreamsPerPrincipal: 1})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/ns/v1/watch", nil)
	req.Header.Set("Authorization", "Bearer root")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("first stream: %v %v", resp, err)
	}
	if st := streamStatus(t, s, "root", "/ns/v1/watch"); st != http.StatusTooManyRequests {
		t.Fatalf("second stream: %d, want 429", st)
	}
	cancel()
	resp.Body.Close()
	waitFor(t, func() bool { return metricValue(t, s, "nameservice_sse_subscribers") == "0" })
	if st := streamStatus(t, s, "root", "/ns/v1/watch"); st != http.StatusOK {
		t.Fatalf("a stream after the first ended: %d", st)
	}
}
