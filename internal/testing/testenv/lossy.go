package testenv

import (
	"net/http"
	"testing"

	"nameservice.dev/nameservice/internal/testing/faultproxy"
)

// LossyProxy starts a fault proxy to target that loses the answer of a
// write when lose returns true (faultproxy.Config.Lose), for
// conformance.RunLostAnswers, and returns its URL.
func LossyProxy(t testing.TB, target string, lose func() bool) (string, error) {
	p, err := faultproxy.Start(faultproxy.Config{Target: target, Lose: func(*http.Request) bool { return lose() }})
	if err != nil {
		return "", err
	}
	t.Cleanup(func() { _ = p.Close() })
	return p.URL(), nil
}
