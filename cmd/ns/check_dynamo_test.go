package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"nameservice.dev/nameservice/internal/testing/testenv"
)

// withoutTransactions serves DynamoDB Local's API at a URL of its own,
// except TransactWriteItems, which it answers as a DynamoDB-compatible
// server without transactions does: UnknownOperationException.
func withoutTransactions(t *testing.T, endpoint string) string {
	t.Helper()
	target, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".TransactWriteItems") {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/x-amz-json-1.0")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"__type":"com.amazon.coral.service#UnknownOperationException"}`)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs.URL
}

// TestCheckDynamoDBWithoutTransactions: against a server that does not know
// TransactWriteItems, ns check says so in one line of its probe and stops,
// exit 1, instead of failing every case of the suite on it.
func TestCheckDynamoDBWithoutTransactions(t *testing.T) {
	endpoint := testenv.DynamoDBEndpoint(t)
	table := "ns-check-notx-" + randomHex(4)
	(&cli{t: t, url: "dynamodb://" + table + "?region=us-east-1&endpoint=" + url.QueryEscape(endpoint)}).want(exitOK, "table", "create")
	u := "dynamodb://" + table + "?region=us-east-1&endpoint=" + url.QueryEscape(withoutTransactions(t, endpoint))
	var out, errb strings.Builder
	code := run(context.Background(), []string{"check", u, "--prefix", "nscheck-notx/"}, &out, &errb)
	t.Logf("exit %d\n%s%s", code, out.String(), errb.String())
	if code != exitError {
		t.Fatalf("exit %d, want %d", code, exitError)
	}
	o := out.String()
	for _, want := range []string{"FAIL Probe", "PreconditionsEnforced: missing or not enforced: TransactWriteItems;", "the suite was not run"} {
		if !strings.Contains(o, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if n := strings.Count(o, "FAIL "); n != 1 || strings.Count(o, "\n") > 8 {
		t.Errorf("%d FAIL lines in %d lines, want the probe's alone, said once", n, strings.Count(o, "\n"))
	}
}
