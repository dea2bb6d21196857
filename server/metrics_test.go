package server_test

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"

	"nameservice.dev/nameservice/server"
)

// junkRequest returns the i-th of a stream of requests no two alike: made-up
// methods and path segments on every route family, the Fluree ones included
// (their verb and alias are where label values used to come from).
func junkRequest(rng *rand.Rand, base string, i int) (*http.Request, error) {
	junk := fmt.Sprintf("x%d%x", i, rng.Uint64())
	methods := []string{"GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "M" + junk}
	paths := []string{
		"/v1/fluree/nameservice/refs/db:main/" + junk, "/fluree/nameservice/refs/" + junk + "/commit",
		"/v1/fluree/storage/ns/" + junk, "/v1/fluree/" + junk, "/ns/v1/records/" + junk,
		"/ns/v1/push/" + junk + "/db:main", "/" + junk, "/metrics/" + junk,
	}
	return http.NewRequest(methods[rng.IntN(len(methods))], base+paths[rng.IntN(len(paths))], nil)
}

// 10,000 junk requests, no token needed, leave /metrics under 100 KB: every
// label value comes from a fixed set.
func TestMetricsLabelsAreBounded(t *testing.T) {
	s := Start(t, server.Options{})
	const n, workers = 10_000, 8
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for i := w; i < n; i += workers {
				req, err := junkRequest(rng, s.URL, i)
				if err != nil {
					errs <- err
					return
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					errs <- err
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	st, b := s.Call(t, "GET", "/metrics", "")
	if st != http.StatusOK {
		t.Fatalf("/metrics: %d", st)
	}
	if len(b) >= 100_000 {
		t.Fatalf("/metrics is %d bytes after %d junk requests, want under 100 KB", len(b), n)
	}
	// The junk was counted, under the fixed values.
	for _, want := range []string{`method="other"`, `route="unmatched"`} {
		if !strings.Contains(b, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	t.Logf("/metrics: %d bytes after %d junk requests", len(b), n)
}
