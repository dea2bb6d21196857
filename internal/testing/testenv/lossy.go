package testenv

import (
	"net/http"
	"testing"

	"nameservice.dev/nameservice/internal/testing/faultproxy"
)

// LossyProxy starts a fault proxy to target that calls lose after the server
// answered a write with success and loses that answer when lose returns true
// (see faultproxy.Config.Lose), for conformance.RunLostAnswers. It returns
// the proxy's URL and closes it when the test ends.
func LossyProxy(t testing.TB, target string, lose func() bool) (string, error) {
	p, err := faultproxy.Start(faultproxy.Config{Target: target, Lose: func(*http.Request) bool { return lose() }})
	if err != nil {
		return "", err
	}
	t.Cleanup(func() { _ = p.Close() })
	return p.URL(), nil
}
