package telemetry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/drivers/fs"
	"nameservice.dev/nameservice/drivers/mem"
	"nameservice.dev/nameservice/internal/telemetry"
	"nameservice.dev/nameservice/model"
)

// recorder collects what an instrumented NameService reports.
type recorder struct {
	spans  *tracetest.InMemoryExporter
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
	logs   bytes.Buffer
}

func newRecorder(t *testing.T) *recorder {
	r := &recorder{spans: tracetest.NewInMemoryExporter(), reader: sdkmetric.NewManualReader()}
	r.tp = sdktrace.NewTracerProvider(sdktrace.WithSyncer(r.spans))
	r.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.reader))
	t.Cleanup(func() { _ = r.tp.Shutdown(context.Background()); _ = r.mp.Shutdown(context.Background()) })
	return r
}

func (r *recorder) options() []nameservice.Option {
	return []nameservice.Option{nameservice.WithTracerProvider(r.tp), nameservice.WithMeterProvider(r.mp),
		nameservice.WithLogHandler(slog.NewJSONHandler(&r.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
}

func attrs(kvs []attribute.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

// sum returns the value of the counter name at the point whose attributes
// include want.
func (r *recorder) sum(t *testing.T, name string, want map[string]string) int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
				if matches(attrs(p.Attributes.ToSlice()), want) {
					total += p.Value
				}
			}
		}
	}
	return total
}

func matches(got, want map[string]string) bool {
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestOutcomes drives every outcome through an instrumented mem driver and
// checks the span of each call, the counters and the log lines.
func TestOutcomes(t *testing.T) {
	r := newRecorder(t)
	ns := nameservice.New(mem.NewStore().Open(), r.options()...)
	ctx := context.Background()
	must(t, ns.Init(ctx, "books"))
	_, err := ns.PublishCommit(ctx, "books", 5, "c5")
	must(t, err)
	_, err = ns.PublishCommit(ctx, "books", 4, "c4") // stale
	must(t, err)
	_, err = ns.CompareAndSetRef(ctx, "books", nameservice.Head, &nameservice.Value{V: 3}, nameservice.Ref{Address: "c6", T: 6})
	must(t, err) // conflict: the head is at 5
	if err := ns.Init(ctx, "books"); err == nil {
		t.Fatal("second init succeeded")
	}
	if _, err := ns.Lookup(ctx, "absent"); err == nil {
		t.Fatal("lookup of an absent record succeeded")
	}

	type want struct{ name, op, concern, outcome string }
	wants := []want{{"create", "create", "", "applied"}, {"update", "update", "head", "applied"},
		{"update", "update", "head", "stale"}, {"update", "update", "head", "conflict"},
		{"create", "create", "", "conflict"}, {"get", "get", "", "not_found"}}
	spans := r.spans.GetSpans()
	if len(spans) != len(wants) {
		t.Fatalf("%d spans, want %d: %v", len(spans), len(wants), spans)
	}
	for i, w := range wants {
		s := spans[i]
		a := attrs(s.Attributes)
		if s.Name != w.name || a["db.operation.name"] != w.op || a["nameservice.outcome"] != w.outcome ||
			a["nameservice.concern"] != strings.TrimSpace(w.concern) || a["db.system.name"] != "mem" || a["nameservice.backend"] != "mem" {
			t.Errorf("span %d: %s %v, want %+v", i, s.Name, a, w)
		}
		if s.SpanKind.String() != "client" {
			t.Errorf("span %d kind %s, want client", i, s.SpanKind)
		}
	}
	if n := r.sum(t, "nameservice.conflicts", map[string]string{"nameservice.outcome": "stale", "nameservice.concern": "head"}); n != 1 {
		t.Errorf("stale conflicts = %d, want 1", n)
	}
	if n := r.sum(t, "nameservice.conflicts", map[string]string{"nameservice.outcome": "conflict"}); n != 1 {
		t.Errorf("CAS conflicts = %d, want 1 (a create of a taken ID is not a push conflict)", n)
	}
	if n := r.sum(t, "nameservice.operations", map[string]string{"nameservice.backend": "mem", "db.operation.name": "update"}); n != 3 {
		t.Errorf("update operations = %d, want 3", n)
	}
	lines := strings.Split(strings.TrimSpace(r.logs.String()), "\n")
	if len(lines) != len(wants) {
		t.Fatalf("%d log lines, want %d:\n%s", len(lines), len(wants), r.logs.String())
	}
	var l map[string]any
	must(t, json.Unmarshal([]byte(lines[2]), &l))
	if l["operation"] != "update" || l["outcome"] != "stale" || l["level"] != "DEBUG" || l["id"] != "books:main" || l["concern"] != "head" {
		t.Errorf("log line of the stale push = %v", l)
	}
}

// TestOffIsNil: without an option there are no instruments, and a call
// on them reports nothing and hands back its context.
func TestOffIsNil(t *testing.T) {
	if in := telemetry.New(mem.NewStore().Open(), telemetry.Config{}); in != nil {
		t.Fatalf("New without a provider = %v, want nil", in)
	}
	var in *telemetry.Instruments
	ctx := context.Background()
	got, c := in.Start(ctx, "get", model.ID{Name: "a", Branch: "main"}, "")
	if got != ctx || c != nil {
		t.Error("Start on nil instruments changed the context or began a call")
	}
	c.End(got, telemetry.OutcomeOK, nil) // must not panic
	if in := telemetry.New(mem.NewStore().Open(), telemetry.Config{MeterProvider: sdkmetric.NewMeterProvider()}); in == nil {
		t.Error("New with a meter provider = nil")
	}
}

// TestTraceContinues: a call's span is a child of the span in its context.
func TestTraceContinues(t *testing.T) {
	r := newRecorder(t)
	ns := nameservice.New(mem.NewStore().Open(), r.options()...)
	ctx, parent := r.tp.Tracer("test").Start(context.Background(), "request")
	must(t, ns.Init(ctx, "books"))
	parent.End()
	spans := r.spans.GetSpans()
	if len(spans) != 2 || spans[0].Parent.SpanID() != parent.SpanContext().SpanID() ||
		spans[0].SpanContext.TraceID() != parent.SpanContext().TraceID() {
		t.Fatalf("spans %v: want the create span under the request span", spans)
	}
}

// TestPreconditionRetry: a push whose cached file another driver replaced
// fails its precondition, re-reads and applies: the span has both events
// and the retry counter moves. Real fs drivers, one directory.
func TestPreconditionRetry(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	open := func() *fs.Driver {
		d, err := fs.Open(ctx, fs.Config{Dir: dir})
		must(t, err)
		t.Cleanup(func() { _ = d.Close() })
		return d
	}
	r := newRecorder(t)
	a := nameservice.New(open(), r.options()...)
	b := nameservice.New(open())
	must(t, a.Init(ctx, "books"))
	_, err := a.PublishCommit(ctx, "books", 1, "c1") // a caches the file
	must(t, err)
	_, err = b.PublishCommit(ctx, "books", 2, "c2") // b replaces it
	must(t, err)
	r.spans.Reset()
	out, err := a.PublishCommit(ctx, "books", 3, "c3")
	must(t, err)
	if !out.Applied {
		t.Fatalf("push over another driver's write not applied: %+v", out)
	}
	spans := r.spans.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	var names []string
	for _, e := range spans[0].Events {
		names = append(names, e.Name)
	}
	if strings.Join(names, ",") != "precondition failed,retry" {
		t.Errorf("events %v, want a failed precondition then a retry", names)
	}
	if code := attrs(spans[0].Events[0].Attributes)["nameservice.backend.code"]; code != "file changed" {
		t.Errorf("precondition code %q, want file changed", code)
	}
	if n := r.sum(t, "nameservice.retries", map[string]string{"nameservice.backend": "fs", "nameservice.retry.reason": "precondition failed"}); n != 1 {
		t.Errorf("retries = %d, want 1", n)
	}
}
