package main

import (
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	colmetric "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"nameservice.dev/nameservice"
)

// otlpReceiver is an OTLP/HTTP endpoint in the test process: it keeps
// every span and the latest value of every counter it is sent.
type otlpReceiver struct {
	mu       sync.Mutex
	spans    []*tracepb.Span
	counters map[string]int64 // name + sorted attributes -> cumulative value
}

func newOTLPReceiver(t *testing.T) (*otlpReceiver, string) {
	r := &otlpReceiver{counters: map[string]int64{}}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(srv.Close)
	return r, srv.URL
}

func (r *otlpReceiver) serve(w http.ResponseWriter, req *http.Request) {
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch req.URL.Path {
	case "/v1/traces":
		var m coltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &m); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		for _, rs := range m.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				r.spans = append(r.spans, ss.Spans...)
			}
		}
	case "/v1/metrics":
		var m colmetric.ExportMetricsServiceRequest
		if err := proto.Unmarshal(b, &m); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		for _, rm := range m.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, met := range sm.Metrics {
					for _, p := range met.GetSum().GetDataPoints() {
						r.counters[met.Name+kvString(p.Attributes)] = p.GetAsInt()
					}
				}
			}
		}
	default:
		http.NotFound(w, req)
		return
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
}

func kvString(kvs []*commonpb.KeyValue) string {
	m := map[string]string{}
	for _, kv := range kvs {
		m[kv.Key] = kv.Value.GetStringValue()
	}
	return "{" + m["nameservice.backend"] + "," + m["db.operation.name"] + m["nameservice.concern"] + "," + m["nameservice.outcome"] + "}"
}

func (r *otlpReceiver) counter(key string) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.counters[key]
}

func (r *otlpReceiver) allSpans() []*tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*tracepb.Span(nil), r.spans...)
}

func spanAttr(s *tracepb.Span, key string) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value.GetStringValue()
		}
	}
	return ""
}

// waitFor polls cond for up to a minute (the exports come every few
// hundred milliseconds; a loaded machine may be seconds late).
func waitFor(t *testing.T, what string, cond func() bool, r *otlpReceiver) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			r.mu.Lock()
			defer r.mu.Unlock()
			t.Fatalf("timed out waiting for %s; received %d spans, counters %v", what, len(r.spans), r.counters)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestServeExportsOTLP runs ns serve with --otlp-endpoint pointing at a
// receiver in this process. A traced client (the http:// driver) pushes
// through it: each request's server span continues the client's trace,
// each backend call the server makes is a child span of it, and a stale
// push moves the exported conflict counter.
func TestServeExportsOTLP(t *testing.T) {
	recv, endpoint := newOTLPReceiver(t)
	t.Setenv("OTEL_METRIC_EXPORT_INTERVAL", "200") // ms
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "100")     // ms
	backend := "file://" + t.TempDir()
	srv := startServe(t, buildNS(t), backend, "--insecure-no-auth", "--otlp-endpoint", endpoint)

	clientSpans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(clientSpans))
	defer tp.Shutdown(context.Background())
	client, err := nameservice.Open(context.Background(), srv.URL, nameservice.WithTracerProvider(tp),
		nameservice.WithMeterProvider(sdkmetric.NewMeterProvider()))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ctx := context.Background()
	if err := client.Init(ctx, "books"); err != nil {
		t.Fatal(err)
	}
	if _, err := client.PublishCommit(ctx, "books", 5, "c5"); err != nil {
		t.Fatal(err)
	}
	const stale = "{file,head,stale}"
	waitFor(t, "the first metrics", func() bool {
		return recv.counter("nameservice.operations{file,create,applied}") == 1 && recv.counter("nameservice.operations{file,update,applied}") == 1
	}, recv)
	if n := recv.counter("nameservice.conflicts" + stale); n != 0 {
		t.Fatalf("conflict counter at %d before any stale push", n)
	}
	out, err := client.PublishCommit(ctx, "books", 3, "c3")
	if err != nil || out.Applied {
		t.Fatalf("stale push: %+v, %v", out, err)
	}
	waitFor(t, "the conflict counter to move", func() bool { return recv.counter("nameservice.conflicts"+stale) == 1 }, recv)

	// The client's span of the stale push, and what the server exported.
	var push sdktrace.ReadOnlySpan
	for _, s := range clientSpans.GetSpans().Snapshots() {
		push = s // the last one: the stale push's update
	}
	traceID, clientSpan := push.SpanContext().TraceID(), push.SpanContext().SpanID()
	var server *tracepb.Span
	waitFor(t, "the server span of the stale push", func() bool {
		for _, s := range recv.allSpans() {
			if s.Kind == tracepb.Span_SPAN_KIND_SERVER && [16]byte(s.TraceId) == traceID {
				server = s
				return true
			}
		}
		return false
	}, recv)
	if [8]byte(server.ParentSpanId) != clientSpan {
		t.Errorf("server span %q has parent %x, want the client's span %s", server.Name, server.ParentSpanId, clientSpan)
	}
	if server.Name != "POST /ns/v1/push/{concern}/{id...}" {
		t.Errorf("server span named %q", server.Name)
	}
	var children []*tracepb.Span
	waitFor(t, "the backend call under the server span", func() bool {
		children = children[:0]
		for _, s := range recv.allSpans() {
			if string(s.ParentSpanId) == string(server.SpanId) {
				children = append(children, s)
			}
		}
		return len(children) == 1
	}, recv)
	c := children[0]
	if c.Kind != tracepb.Span_SPAN_KIND_CLIENT || spanAttr(c, "db.operation.name") != "update" ||
		spanAttr(c, "nameservice.outcome") != "stale" || spanAttr(c, "nameservice.record.id") != "books:main" ||
		spanAttr(c, "nameservice.backend") != "file" {
		t.Errorf("backend call span %q: %v", c.Name, c.Attributes)
	}
	stopServe(t, srv)
}

// callLine is the debug line of the create TestServeDebugLogsCalls makes:
// it names the write (derived from the request's idempotency key, the same
// on every server) and whether it is a resend.
var callLine = regexp.MustCompile(`"msg":"nameservice call","backend":"file","operation":"create","id":"books:main","write":"k[0-9a-f]{32}","resend":false,"outcome":"applied"`)

// TestServeDebugLogsCalls: at --log-level debug ns serve logs each backend
// call (the library's slog records) beside its request lines; at info it
// logs none.
func TestServeDebugLogsCalls(t *testing.T) {
	bin := buildNS(t)
	for _, level := range []string{"debug", "info"} {
		srv := startServe(t, bin, "file://"+t.TempDir(), "--insecure-no-auth", "--log-level", level)
		client, err := nameservice.Open(context.Background(), srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		if err := client.Init(context.Background(), "books"); err != nil {
			t.Fatal(err)
		}
		_ = client.Close()
		stopServe(t, srv)
		logged := callLine.MatchString(srv.Stderr.String())
		if logged != (level == "debug") {
			t.Errorf("--log-level %s: call logged %v; stderr:\n%s", level, logged, srv.Stderr)
		}
	}
}
