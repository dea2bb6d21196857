package server_test

import (
	"context"
	"testing"

	"nameservice.dev/nameservice/server"
)

func FuzzFlureeCASBody(f *testing.F) {
	c := "bafyreibnoelefnzgwbcacyt4vh52ymxvzbjq7mmqhtcnwarfq4lzegsiqe"
	f.Add(`{"expected":{"id":null,"t":0},"new":{"id":"` + c + `","t":1}}`)
	f.Add(`{"expected":null,"new":{"id":"` + c + `","t":2}}`)
	f.Add(`{"new":{"id":null,"t":-1}}`)
	f.Add(`{"expected":{"t":"x"}}`)
	srv, ns := NewFuzzServer(f, server.Options{})
	f.Fuzz(func(t *testing.T, body string) {
		rec := ServeOnce(srv, "POST", "/v1/fluree/nameservice/refs/db:main/commit", body)
		if !Allowed[rec.Code] {
			t.Fatalf("CAS %q: %d %s", body, rec.Code, rec.Body)
		}
		if r, err := ns.Lookup(context.Background(), "db"); err != nil || r.Validate() != nil {
			t.Fatalf("the record no longer validates after CAS %q: %v", body, err)
		}
	})
}
