package docstore

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/testing/objstoretest"
	"nameservice.dev/nameservice/internal/testing/testenv"
)

// TestRequestCounts checks the DynamoDB requests of each operation on one
// record (objstoretest.RequestCounts), counted at a proxy in front of
// DynamoDB Local, on a table of the test's own.
func TestRequestCounts(t *testing.T) {
	u := ownTable(t)
	op := func(r *http.Request) string { _, op, _ := strings.Cut(r.Header.Get("X-Amz-Target"), "."); return op }
	cnt := objstoretest.NewAPICounter(func(r *http.Request) bool { return isWrite(op(r), nil) },
		func(r *http.Request) bool { return op(r) == "Scan" || op(r) == "Query" })
	target, err := url.Parse(testenv.DynamoDBEndpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = cnt
	proxy := httptest.NewServer(rp)
	t.Cleanup(proxy.Close)
	table := mustParse(t, u).Host
	objstoretest.RequestCounts(t, cnt, func() driver.Driver {
		d, err := openURL(context.Background(), tableURL(table, proxy.URL))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = d.Close() })
		return d
	})
}
