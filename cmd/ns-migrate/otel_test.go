package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// TestExportsOTLP: with --otlp-endpoint, a run exports a span per record
// with the driver calls it made as children, before it exits.
func TestExportsOTLP(t *testing.T) {
	var mu sync.Mutex
	var spans []*tracepb.Span
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/v1/traces" {
			return // metrics: not looked at here
		}
		var m coltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &m); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for _, rs := range m.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				spans = append(spans, ss.Spans...)
			}
		}
	}))
	defer srv.Close()
	from, to := memURL(t, "src"), memURL(t, "dst")
	seed(t, open(t, from))
	want(t, exitOK, "--from", from, "--to", to, "--id", "books", "--otlp-endpoint", srv.URL)

	mu.Lock()
	defer mu.Unlock()
	var record *tracepb.Span
	for _, s := range spans {
		if s.Name == "migrate record" {
			record = s
		}
	}
	if record == nil {
		t.Fatalf("no migrate record span among %d spans", len(spans))
	}
	children := 0
	for _, s := range spans {
		if string(s.ParentSpanId) == string(record.SpanId) {
			children++
		}
	}
	if children == 0 {
		t.Errorf("the record's span has no driver call under it (%d spans)", len(spans))
	}
	if r := runCmd(t, "--from", from, "--to", to, "--otlp-endpoint", "not a url"); r.code != exitUsage {
		t.Errorf("a malformed --otlp-endpoint: exit %d, want %d", r.code, exitUsage)
	}
}
