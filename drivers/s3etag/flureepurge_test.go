package s3etag_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/s3etag"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// flureeMembers are the members Fluree v4's main-file struct (NsFileV2)
// keeps when it rewrites a main file; it drops every other.
var flureeMembers = []string{"@context", "@id", "@type", "f:ledger", "f:branch", "f:commitCid", "f:t", "f:ledgerIndex",
	"f:status", "f:defaultContextCid", "f:statusV", "f:statusMeta", "f:configV", "f:configMeta", "f:configCid",
	"f:sourceBranch", "f:branchPoint", "f:branches"}

// TestPurgeRacesFlureeCommit: a purge whose mark fails its precondition
// because Fluree published a commit meanwhile (rewriting the main file
// without f:incarnation, so that the record reads as one created since)
// has sealed the record's other files: it answers outcome unknown, never
// "not found" for a record that exists.
func TestPurgeRacesFlureeCommit(t *testing.T) {
	t.Parallel()
	endpoint, bucket := newBucket(t)
	cfg := baseConfig(endpoint, bucket, jsonld.LayoutB)
	cfg.Prefix = "fp"
	cfg.Dialect = jsonld.FlureeV4
	ctx := context.Background()
	direct, err := s3etag.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	client, key := direct.Client(), "fp/ns@v2/db/main.json"
	flureePublish := func() {
		out, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: &key})
		if err != nil {
			t.Error(err)
			return
		}
		data, _ := io.ReadAll(out.Body)
		out.Body.Close()
		var in map[string]json.RawMessage
		if err := json.Unmarshal(data, &in); err != nil {
			t.Error(err)
			return
		}
		doc := map[string]any{}
		for _, k := range flureeMembers {
			if v, ok := in[k]; ok {
				doc[k] = v
			}
		}
		doc["f:commitCid"], doc["f:t"] = "bafyc9", 9
		b, _ := json.Marshal(doc)
		if _, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: bytes.NewReader(b)}); err != nil {
			t.Error(err)
		}
	}
	target, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	forward := httputil.NewSingleHostReverseProxy(target)
	var armed, published atomic.Bool
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if armed.Load() && r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/"+key) && published.CompareAndSwap(false, true) {
			flureePublish() // just before the purge's mark
		}
		forward.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	c := cfg
	c.Endpoint = proxy.URL
	d, err := s3etag.Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	id := model.ID{Name: "db", Branch: "main"}
	if err := direct.Create(ctx, model.NewLedger(id, 1)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []model.Concern{model.Head, model.Index} {
		if out, err := direct.Update(ctx, id, c, driver.IfAbove(), model.RefValue("bafy"+c.String(), 5)); err != nil || !out.Applied {
			t.Fatalf("push %s: %+v %v", c, out, err)
		}
	}
	armed.Store(true)
	perr := d.Delete(ctx, id)
	if !published.Load() {
		t.Fatal("no PUT of the main file went through the proxy")
	}
	rec, gerr := direct.Get(ctx, id)
	switch {
	case perr == nil && !errors.Is(gerr, model.ErrNotFound):
		t.Fatalf("purge done, yet the record reads %+v, %v", rec, gerr)
	case perr != nil && errors.Is(perr, model.ErrNotFound) && gerr == nil:
		t.Fatalf("purge answered %v, yet the record exists: head %v, index %v", perr, rec.Head, rec.Index)
	case errors.Is(perr, model.ErrOutcomeUnknown):
		t.Logf("purge: %v; record: %v", perr, gerr)
	case perr != nil:
		t.Fatalf("purge: %v (record: %+v, %v)", perr, rec, gerr)
	}
}
