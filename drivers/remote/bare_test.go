package remote_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/internal/testing/testenv"
)

// bareEnv names the backend URL of the bare floor when this test binary
// runs as that floor (see TestMain).
const bareEnv = "NS_TEST_BARE_FLOOR_URL"

// startBare starts the floor the push benchmarks hold `ns serve` against
// in front of url: this test binary, run again as bareServe, in a process
// of its own.
func startBare(tb testing.TB, url string) *testenv.ServeProcess {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), bareEnv+"="+url)
	return testenv.StartCmd(tb, cmd)
}

// bareServe is the floor: the library's push behind the thinnest HTTP
// server, with no authentication, idempotency, limits, metrics or log. It
// listens on a free loopback port, prints "listening on http://ADDR", and
// answers POST /init/{id} by creating id, and POST /push/{id}/{t} by
// publishing head t of id (address "c"): 200 {"applied":true}, 409 when
// not applied.
func bareServe(url string) error {
	ns, err := nameservice.Open(context.Background(), url)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Printf("listening on http://%s\n", ln.Addr())
	mux := http.NewServeMux()
	mux.HandleFunc("POST /init/{id}", func(w http.ResponseWriter, r *http.Request) {
		if err := ns.Init(r.Context(), r.PathValue("id")); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})
	mux.HandleFunc("POST /push/{id}/{t}", func(w http.ResponseWriter, r *http.Request) {
		t, err := strconv.ParseInt(r.PathValue("t"), 10, 64)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		out, err := ns.PublishCommit(r.Context(), r.PathValue("id"), t, "c")
		switch {
		case err != nil:
			http.Error(w, err.Error(), http.StatusInternalServerError)
		case !out.Applied:
			w.WriteHeader(http.StatusConflict)
		default:
			_, _ = w.Write([]byte(`{"applied":true}`))
		}
	})
	return http.Serve(ln, mux)
}
