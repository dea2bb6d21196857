// Command bareserve (bareserve URL) is the floor the push benchmarks hold
// `ns serve` against: the library's push behind the thinnest HTTP server,
// with no authentication, idempotency, limits, metrics or log. It listens
// on a free loopback port, prints "listening on http://ADDR", and answers
// POST /init/{id} by creating id, and POST /push/{id}/{t} by publishing
// head t of id (address "c"): 200 {"applied":true}, 409 when not applied.
package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"

	"nameservice.dev/nameservice"
	_ "nameservice.dev/nameservice/drivers/all" // the URL schemes ns serve opens
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bareserve:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) != 2 {
		return fmt.Errorf("usage: bareserve URL")
	}
	ns, err := nameservice.Open(context.Background(), os.Args[1])
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
