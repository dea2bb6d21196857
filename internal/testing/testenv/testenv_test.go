package testenv

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// recorder is a testing.TB that records Skipf/Fatalf instead of stopping the
// goroutine, so the unset-variable paths can be checked.
type recorder struct {
	testing.TB
	skipped, fatal string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Skipf(format string, args ...any)  { r.skipped = fmt.Sprintf(format, args...) }
func (r *recorder) Fatalf(format string, args ...any) { r.fatal = fmt.Sprintf(format, args...) }

// unsetenv unsets key for the duration of the test.
func unsetenv(t *testing.T, key string) {
	t.Setenv(key, "") // restores the old value at cleanup
	os.Unsetenv(key)
}

var endpoints = []struct {
	env string
	get func(testing.TB) string
}{
	{DynamoDBEndpointEnv, DynamoDBEndpoint},
	{S3EndpointEnv, S3Endpoint},
	{GCSEndpointEnv, GCSEndpoint},
	{AzureEndpointEnv, AzureEndpoint},
}

func TestEndpointSet(t *testing.T) {
	for _, e := range endpoints {
		t.Run(e.env, func(t *testing.T) {
			unsetenv(t, DynamoDB2EndpointEnv) // one DynamoDB Local: no choice made
			t.Setenv("CI", "true")
			t.Setenv(e.env, "http://127.0.0.1:12345")
			r := &recorder{TB: t}
			if got := e.get(r); got != "http://127.0.0.1:12345" {
				t.Errorf("got %q, want http://127.0.0.1:12345", got)
			}
			if r.skipped != "" || r.fatal != "" {
				t.Errorf("unexpected skip %q / fatal %q", r.skipped, r.fatal)
			}
		})
	}
}

func TestEndpointUnset(t *testing.T) {
	for _, e := range endpoints {
		for _, ci := range []string{"", "true"} {
			t.Run(e.env+"/CI="+ci, func(t *testing.T) {
				unsetenv(t, e.env)
				unsetenv(t, DynamoDB2EndpointEnv)
				if ci == "" {
					unsetenv(t, "CI")
				} else {
					t.Setenv("CI", ci)
				}
				if Required() != (ci != "") {
					t.Fatalf("Required() = %v with CI=%q", Required(), ci)
				}
				r := &recorder{TB: t}
				if got := e.get(r); got != "" {
					t.Errorf("got %q, want empty", got)
				}
				msg, other := r.skipped, r.fatal
				if ci != "" {
					msg, other = r.fatal, r.skipped // CI must fail, never skip
				}
				if msg == "" || other != "" {
					t.Fatalf("CI=%q: skip %q, fatal %q", ci, r.skipped, r.fatal)
				}
				for _, want := range []string{e.env, "required in CI", "scripts/test.sh"} {
					if !strings.Contains(msg, want) {
						t.Errorf("message %q does not mention %q", msg, want)
					}
				}
			})
		}
	}
}

func TestEndpointMalformed(t *testing.T) {
	unsetenv(t, "CI")
	for _, v := range []string{"127.0.0.1:8000", "ftp://127.0.0.1:8000", "http://"} {
		t.Setenv(S3EndpointEnv, v)
		r := &recorder{TB: t}
		if got := S3Endpoint(r); got != "" || r.fatal == "" {
			t.Errorf("%q: got %q, fatal %q; want empty and a failure", v, got, r.fatal)
		}
	}
}

var httpClient = &http.Client{Timeout: 10 * time.Second}

// liveBudget is how long a server has to answer TestRealServers.
const liveBudget = time.Minute

// TestRealServers checks the endpoints answer when scripts/test.sh started
// them. A server on a machine busy with the rest of the run (Azurite's
// Node, a JVM collecting garbage) may pause: it is asked again until
// liveBudget has passed, so that only a server that is gone or hung fails.
func TestRealServers(t *testing.T) {
	for _, e := range endpoints {
		t.Run(e.env, func(t *testing.T) {
			ep := e.get(t)
			var err error
			for end := time.Now().Add(liveBudget); time.Now().Before(end); time.Sleep(time.Second) {
				var resp *http.Response
				if resp, err = httpClient.Get(ep + "/"); err == nil {
					resp.Body.Close()
					return
				}
				t.Logf("%s=%s: %v; asking again", e.env, ep, err)
			}
			t.Fatalf("%s=%s did not answer within %s: %v", e.env, ep, liveBudget, err)
		})
	}
}

// TestLeastUsed: a process takes the server fewest live processes chose
// (this one counts once per choice it recorded), and forgets the choices
// of processes that ended.
func TestLeastUsed(t *testing.T) {
	servers := []string{"http://a-" + RandomHex(4), "http://b-" + RandomHex(4)}
	dead := exec.Command("true")
	Must(t, dead.Run())
	dir := filepath.Dir(choiceFile(servers, 0, 0))
	Must(t, os.MkdirAll(dir, 0o755))
	t.Cleanup(func() { os.RemoveAll(dir) })
	stale := choiceFile(servers, 1, dead.Process.Pid)
	Must(t, os.WriteFile(stale, nil, 0o644))
	for i, want := range []string{servers[0], servers[1], servers[0]} {
		if got := leastUsed(servers); got != want {
			t.Fatalf("choice %d: %s, want %s", i+1, got, want)
		}
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("the choice of an ended process is still there: %v", err)
	}
}
