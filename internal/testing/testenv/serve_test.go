package testenv

import (
	"net/http"
	"testing"
	"time"
)

// TestKillAndRestart: a killed ns serve answers nothing; restarted, it
// answers again at the same URL.
func TestKillAndRestart(t *testing.T) {
	p := ServeCLI(t, "file://"+t.TempDir(), "--insecure-no-auth")
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	healthy := func() bool {
		resp, err := client.Get(p.URL + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
	if !healthy() {
		t.Fatal("ns serve does not answer /healthz")
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	if healthy() {
		t.Fatal("a killed ns serve answered")
	}
	q, err := p.Restart(t)
	if err != nil {
		t.Fatal(err)
	}
	if q.URL != p.URL {
		t.Errorf("restarted at %s, want %s", q.URL, p.URL)
	}
	if !healthy() {
		t.Error("the restarted ns serve does not answer /healthz")
	}
}
