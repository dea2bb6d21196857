// Package telemetry instruments a driver: a span, metrics and a log line per
// driver call, following OpenTelemetry's database semantic conventions. It
// is off unless the caller passes a provider or a log handler
// (nameservice.WithTracerProvider, WithMeterProvider, WithLogHandler): it
// sets no global provider, and without one Wrap returns the driver itself,
// so an uninstrumented NameService pays nothing.
//
// Drivers report what happens inside one call (a retry, a failed
// precondition) with Retry and PreconditionFailed, which are no-ops outside
// an instrumented call.
package telemetry

import (
	"log/slog"
	"net/url"
	"reflect"
	"strings"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"nameservice.dev/nameservice/driver"
)

// ScopeName is the instrumentation scope of the spans and metrics.
const ScopeName = "nameservice.dev/nameservice"

// Config says where a wrapped driver reports. Nil fields report nothing.
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

// Enabled reports whether cfg reports anything.
func (cfg Config) Enabled() bool {
	return cfg.TracerProvider != nil || cfg.MeterProvider != nil || cfg.Logger != nil
}

// Wrap returns d instrumented as cfg says, or d itself when cfg reports
// nothing. The wrapper implements driver.Driver only: assert optional
// capabilities on the driver it wraps.
func Wrap(d driver.Driver, cfg Config) driver.Driver {
	if !cfg.Enabled() {
		return d
	}
	if cfg.Backend == "" {
		cfg.Backend = BackendOf(d)
	}
	return &instrumented{d: d, in: newInstruments(cfg)}
}

// BackendOf names d's backend by its package: "dynamodb", "fs", "mem", ...
func BackendOf(d driver.Driver) string {
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
