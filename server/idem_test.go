package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"nameservice.dev/nameservice/internal/nswire"
	"nameservice.dev/nameservice/server"
	"nameservice.dev/nameservice/server/auth"
)

// An Idempotency-Key longer than MaxIdempotencyKey is refused with 400,
// before the write runs.
func TestIdempotencyKeyLength(t *testing.T) {
	s := Start(t, server.Options{})
	Must(t, s.NS.Init(context.Background(), "db"))
	push := func(v int, key string) (int, string) {
		body := fmt.Sprintf(`{"condition":"above","new":{"v":%d,"payload":{"address":"a%d","t":%d}}}`, v, v, v)
		return s.Call(t, "POST", "/ns/v1/push/head/db:main", body, nswire.HeaderIdempotencyKey, key, nswire.HeaderAttempt, "1")
	}
	st, b := push(1, strings.Repeat("k", server.MaxIdempotencyKey+1))
	if st != http.StatusBadRequest || !strings.Contains(b, "longer than "+strconv.Itoa(server.MaxIdempotencyKey)+" bytes") {
		t.Fatalf("overlong key: %d %s, want 400 naming the limit", st, b)
	}
	if rec, err := s.NS.Lookup(context.Background(), "db"); err != nil || !rec.Head.Unborn() {
		t.Fatalf("the refused push was applied: %v %v", rec, err)
	}
	if st, b := push(1, strings.Repeat("k", server.MaxIdempotencyKey)); st != http.StatusOK {
		t.Fatalf("key of the maximum length: %d %s", st, b)
	}
}

// The outcome cache holds at most IdempotencyCacheBytes: old outcomes are
// evicted (a resend of one is resolved against the backend instead of
// replayed), recent ones are replayed.
func TestIdempotencyCacheBytes(t *testing.T) {
	const limit = 16 << 10
	s := Start(t, server.Options{IdempotencyCacheBytes: limit})
	Must(t, s.NS.Init(context.Background(), "db"))
	body := func(v int) string {
		return fmt.Sprintf(`{"condition":"above","new":{"v":%d,"payload":{"state":"s%d"}}}`, v, v)
	}
	key := func(v int) string { return fmt.Sprintf("%0128d", v) }
	const writes = 500 // status v2 to v501 (init made v1)
	for v := 2; v <= writes+1; v++ {
		st, b := s.Call(t, "POST", "/ns/v1/push/status/db:main", body(v), nswire.HeaderIdempotencyKey, key(v), nswire.HeaderAttempt, "1")
		if st != http.StatusOK {
			t.Fatalf("push %d: %d %s", v, st, b)
		}
		if v%50 == 0 {
			n, err := strconv.ParseFloat(metricValue(t, s, "nameservice_idempotency_cache_bytes"), 64)
			if err != nil || n <= 0 || n > limit {
				t.Fatalf("after %d writes the cache holds %v bytes (%v), want (0, %d]", v, n, err, limit)
			}
		}
	}
	replayed := func(v int) bool {
		resp := s.Do(t, "POST", "/ns/v1/push/status/db:main", body(v), nswire.HeaderIdempotencyKey, key(v), nswire.HeaderAttempt, "2")
		resp.Body.Close()
		return resp.Header.Get(nswire.HeaderReplayed) == "true"
	}
	if replayed(2) {
		t.Fatal("the first outcome is still kept after 500 writes in 16 KiB")
	}
	if !replayed(writes + 1) {
		t.Fatal("the last outcome was not kept")
	}
}

// Kept outcomes are replayed only to the principal that wrote them: two
// subjects of one JWS issuer are two principals.
func TestIdempotencyPerPrincipal(t *testing.T) {
	trusted := NewIssuer(t)
	a, err := auth.NewAuthenticator(auth.Config{TrustedIssuers: []string{trusted.DID}})
	if err != nil {
		t.Fatal(err)
	}
	s := Start(t, server.Options{Auth: a})
	Must(t, s.NS.Init(context.Background(), "db"))
	as := func(sub string) string {
		return trusted.Token(t, trusted.Claims(map[string]any{"sub": sub, "fluree.storage.all": true}))
	}
	body := `{"condition":"above","new":{"v":1,"payload":{"address":"a","t":1}}}`
	s.Token = as("alice")
	if st, b := s.Call(t, "POST", "/ns/v1/push/head/db:main", body, nswire.HeaderIdempotencyKey, "k", nswire.HeaderAttempt, "1"); st != http.StatusOK {
		t.Fatalf("alice's push: %d %s", st, b)
	}
	for sub, replay := range map[string]bool{"alice": true, "bob": false} {
		s.Token = as(sub)
		resp := s.Do(t, "POST", "/ns/v1/push/head/db:main", body, nswire.HeaderIdempotencyKey, "k", nswire.HeaderAttempt, "2")
		resp.Body.Close()
		if got := resp.Header.Get(nswire.HeaderReplayed) == "true"; got != replay {
			t.Errorf("%s's resend with alice's key: replayed %v, want %v", sub, got, replay)
		}
	}
}
