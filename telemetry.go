package nameservice

import (
	"log/slog"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// WithTracerProvider traces every driver call with tp: a client span per
// call (create, get, update, retract, delete, list) following
// OpenTelemetry's database conventions, with the record, the concern and
// the outcome (applied, stale, conflict, not_found, ok, error), retries and
// failed preconditions as events, and the AWS SDK's own spans as children.
// A call continues the trace of its context. Without this option nothing is
// traced and nothing is set globally. See docs/observability.md.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(ns *NameService) { ns.tel.TracerProvider = tp }
}

// WithMeterProvider records metrics of every driver call with mp: calls by
// outcome (nameservice.operations), their latency
// (db.client.operation.duration), writes not applied
// (nameservice.conflicts) and retries (nameservice.retries), each by
// backend. Without this option nothing is recorded.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(ns *NameService) { ns.tel.MeterProvider = mp }
}

// WithLogHandler logs every driver call to h: at debug level its
// operation, outcome and duration, at warn level a call that failed.
// Without this option nothing is logged.
func WithLogHandler(h slog.Handler) Option {
	return func(ns *NameService) {
		if h != nil {
			ns.tel.Logger = slog.New(h)
		}
	}
}

// withBackend names the backend and namespace (table, bucket, directory)
// in telemetry, as Open knows them from the URL.
func withBackend(backend, namespace string) Option {
	return func(ns *NameService) { ns.tel.Backend, ns.tel.Namespace = backend, namespace }
}
