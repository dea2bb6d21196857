// Package telemetry reports the driver calls of a NameService: a span,
// metrics and a log line per call, following OpenTelemetry's database
// semantic conventions. The NameService, the one layer between callers and
// a driver, starts and ends each call (Instruments.Start, Call.End); this
// package wraps nothing. It is off unless the caller passes a provider or a
// log handler (nameservice.WithTracerProvider, WithMeterProvider,
// WithLogHandler): it sets no global provider, and without one New returns
// nil Instruments, whose calls cost nothing.
//
// Drivers report what happens inside one call (a retry, a failed
// precondition) with Retry and PreconditionFailed, which are no-ops outside
// an instrumented call.
package telemetry

import (
	"errors"
	"log/slog"
	"net/url"
	"reflect"
	"strings"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/model"
)

// ScopeName is the instrumentation scope of the spans and metrics.
const ScopeName = "nameservice.dev/nameservice"

// Config says where the calls report. Nil fields report nothing.
type Config struct {
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	Logger         *slog.Logger
	// Backend names the backend in every span and series ("dynamodb",
	// "s3", "fs", ...); "" derives it from the driver's package.
	Backend string
	// Namespace is the table, bucket or directory (db.namespace); "" for
	// none.
	Namespace string
}

// ErrOutcome is the outcome of a call that returned err: ok when nil.
func ErrOutcome(err error, ok string) string {
	switch {
	case err == nil:
		return ok
	case errors.Is(err, model.ErrNotFound):
		return OutcomeNotFound
	case errors.Is(err, model.ErrAlreadyExists):
		return OutcomeConflict
	}
	return OutcomeError
}

// UpdateOutcome is the outcome of an update under cond that returned out
// and err: a write not applied is stale, or a conflict for a
// compare-and-set.
func UpdateOutcome(out driver.Outcome, cond driver.Condition, err error) string {
	switch {
	case err != nil || out.Applied:
		return ErrOutcome(err, OutcomeApplied)
	case cond.Kind == driver.Equals:
		return OutcomeConflict
	}
	return OutcomeStale
}

// backendOf names d's backend by its package: "dynamodb", "fs", "mem", ...
func backendOf(d driver.Driver) string {
	t := reflect.TypeOf(d)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.PkgPath() == "" {
		return "unknown"
	}
	p := t.PkgPath()
	return p[strings.LastIndexByte(p, '/')+1:]
}

// FromURL returns the backend and namespace of a nameservice URL: its
// scheme, and its host and path (the table, bucket or directory) without
// credentials or parameters.
func FromURL(rawURL string) (backend, namespace string) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", ""
	}
	ns := strings.TrimPrefix(u.Host+u.Path, "/")
	if u.Opaque != "" {
		ns = u.Opaque
	}
	return strings.ToLower(u.Scheme), ns
}
