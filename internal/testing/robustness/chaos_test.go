package robustness

import (
	"testing"
)

// TestChaosFindsTheRecord: the chaos client tells which of the workload's
// IDs a request writes, in the forms the stores' requests name it.
func TestChaosFindsTheRecord(t *testing.T) {
	m, err := ledgerPatterns(workload(1).all())
	if err != nil {
		t.Fatal(err)
	}
	run := &chaosRun{matches: m}
	cases := map[string]string{
		`{"Key":{"pk":{"S":"rb/a:main"},"sk":{"S":"head"}}}`:                 "rb/a",     // DynamoDB
		"/bucket/ns@v2/rb/b/dev.json":                                        "rb/b:dev", // S3, Azure
		`{"_key":"rb%2Ffresh:main|head"}`:                                    "rb/fresh", // docstore
		"/ns/v1/push/head/rb/a:main":                                         "rb/a",     // ns serve
		"/upload/storage/v1/b/bucket/o\nname=ns@v2/rb/fresh/main.index.json": "rb/fresh", // GCS
		"/ns/v1/push/head/rb/ab:main":                                        "",         // another ledger
	}
	for req, want := range cases {
		if got := run.target(req); got != want {
			t.Errorf("%q: got %q, want %q", req, got, want)
		}
	}
	if _, err := ledgerPatterns([]string{"x/y", "x/y:dev"}); err == nil {
		t.Error("IDs of one ledger were accepted")
	}
}
