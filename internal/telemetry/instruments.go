package telemetry

import (
	"cmp"
	"errors"
	"log/slog"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"nameservice.dev/nameservice/driver"
)

// Attribute keys: OpenTelemetry's database conventions, and ours under
// "nameservice.".
const (
	keySystem    = attribute.Key("db.system.name")
	keyOperation = attribute.Key("db.operation.name")
	keyNamespace = attribute.Key("db.namespace")
	keyErrorType = attribute.Key("error.type")
	keyBackend   = attribute.Key("nameservice.backend")
	keyID        = attribute.Key("nameservice.record.id")
	keyConcern   = attribute.Key("nameservice.concern")
	keyOutcome   = attribute.Key("nameservice.outcome")
	keyReason    = attribute.Key("nameservice.retry.reason")
	keyAttempt   = attribute.Key("nameservice.retry.attempt")
)

// Outcomes of a call (nameservice.outcome).
const (
	OutcomeOK       = "ok"        // a read or listing answered
	OutcomeApplied  = "applied"   // a write landed
	OutcomeStale    = "stale"     // a monotonic publish at or below the current watermark
	OutcomeConflict = "conflict"  // a compare-and-set whose expected value was not current; a create of a taken ID
	OutcomeNotFound = "not_found" // no such record (or concern)
	OutcomeError    = "error"     // any other error
)

// Instruments are what the calls of one NameService report to: New makes
// them, Start begins a call. A nil *Instruments reports nothing.
type Instruments struct {
	tracer    trace.Tracer
	log       *slog.Logger
	backend   string
	namespace string
	base      []attribute.KeyValue // on every span
	backendKV attribute.KeyValue

	calls     metric.Int64Counter
	duration  metric.Float64Histogram
	conflicts metric.Int64Counter
	retries   metric.Int64Counter
}

// New returns the Instruments the calls to d report to as cfg says, or nil
// when cfg reports nothing.
func New(d driver.Driver, cfg Config) *Instruments {
	tp, mp := cfg.TracerProvider, cfg.MeterProvider
	if tp == nil && mp == nil && cfg.Logger == nil {
		return nil
	}
	cfg.Backend = cmp.Or(cfg.Backend, backendOf(d))
	tp = cmp.Or[trace.TracerProvider](tp, tracenoop.NewTracerProvider())
	mp = cmp.Or[metric.MeterProvider](mp, noop.NewMeterProvider())
	in := &Instruments{tracer: tp.Tracer(ScopeName), log: cfg.Logger, backend: cfg.Backend, namespace: cfg.Namespace,
		backendKV: keyBackend.String(cfg.Backend)}
	in.base = []attribute.KeyValue{keySystem.String(systemName(cfg.Backend)), in.backendKV}
	if cfg.Namespace != "" {
		in.base = append(in.base, keyNamespace.String(cfg.Namespace))
	}
	m := mp.Meter(ScopeName)
	var errs []error
	counter := func(name, desc, unit string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithDescription(desc), metric.WithUnit(unit))
		errs = append(errs, err)
		if c == nil {
			c, _ = noop.Meter{}.Int64Counter("")
		}
		return c
	}
	in.calls = counter("nameservice.operations", "Driver calls, by backend, operation and outcome.", "{operation}")
	var err error
	in.duration, err = m.Float64Histogram("db.client.operation.duration",
		metric.WithDescription("Duration of driver calls."), metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10))
	if errs = append(errs, err); in.duration == nil {
		in.duration, _ = noop.Meter{}.Float64Histogram("")
	}
	in.conflicts = counter("nameservice.conflicts", "Writes not applied: stale publishes and compare-and-set conflicts.", "{operation}")
	in.retries = counter("nameservice.retries",
		"Requests a driver sent again within one call (failed preconditions, lost answers, contention).", "{retry}")
	// A provider that refuses an instrument still returns one that works or
	// does nothing; the names here are fixed and valid, so an error says the
	// provider is broken, and the wrapper reports what it can.
	if err := errors.Join(errs...); err != nil && in.log != nil {
		in.log.Warn("nameservice telemetry: creating instruments", slog.String("error", err.Error()))
	}
	return in
}

// systemName is db.system.name: the convention's name where it has one.
func systemName(backend string) string {
	if backend == "dynamodb" {
		return "aws.dynamodb"
	}
	return backend
}
