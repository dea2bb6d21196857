// Package otelexport exports the commands' traces and metrics over OTLP
// (HTTP, protobuf) when an endpoint is given: --otlp-endpoint, or
// OpenTelemetry's standard OTEL_EXPORTER_OTLP_ENDPOINT (and its
// _TRACES_/_METRICS_ forms, and every other OTEL_* setting the SDK reads).
package otelexport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/internal/buildinfo"
)

// Exporter holds the providers of one command run. A nil *Exporter is off:
// its methods do nothing.
type Exporter struct {
	Tracer     *sdktrace.TracerProvider
	Meter      *sdkmetric.MeterProvider
	Propagator propagation.TextMapPropagator
}

// Start returns an Exporter sending to endpoint (a base URL such as
// http://collector:4318, to which /v1/traces and /v1/metrics are added),
// or where the OTEL_EXPORTER_OTLP_* variables say when endpoint is "". It
// returns nil when neither is set. service names the command
// (service.name; OTEL_SERVICE_NAME overrides it).
func Start(ctx context.Context, endpoint, service string) (*Exporter, error) {
	if endpoint == "" && os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" &&
		os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" && os.Getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") == "" {
		return nil, nil
	}
	var topts []otlptracehttp.Option
	var mopts []otlpmetrichttp.Option
	if endpoint != "" {
		base, err := url.Parse(endpoint)
		if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
			return nil, fmt.Errorf("--otlp-endpoint %q: want an http(s)://host:port URL (OTLP over HTTP, e.g. http://127.0.0.1:4318)", endpoint)
		}
		root := strings.TrimSuffix(endpoint, "/")
		topts = append(topts, otlptracehttp.WithEndpointURL(root+"/v1/traces"))
		mopts = append(mopts, otlpmetrichttp.WithEndpointURL(root+"/v1/metrics"))
	}
	res, err := resource.New(ctx, resource.WithTelemetrySDK(),
		resource.WithAttributes(semconv.ServiceName(service), semconv.ServiceVersion(buildinfo.Read().Version)),
		resource.WithFromEnv())
	if err != nil {
		return nil, fmt.Errorf("OpenTelemetry resource: %w", err)
	}
	te, err := otlptracehttp.New(ctx, topts...)
	if err != nil {
		return nil, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	me, err := otlpmetrichttp.New(ctx, mopts...)
	if err != nil {
		_ = te.Shutdown(ctx)
		return nil, fmt.Errorf("OTLP metric exporter: %w", err)
	}
	return &Exporter{
		Tracer:     sdktrace.NewTracerProvider(sdktrace.WithBatcher(te), sdktrace.WithResource(res)),
		Meter:      sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(me)), sdkmetric.WithResource(res)),
		Propagator: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}),
	}, nil
}

// Options are the NameService options that report to e.
func (e *Exporter) Options() []nameservice.Option {
	if e == nil {
		return nil
	}
	return []nameservice.Option{nameservice.WithTracerProvider(e.Tracer), nameservice.WithMeterProvider(e.Meter)}
}

// Shutdown sends what is buffered (spans, the last metrics) and stops, for
// at most 5 seconds: a collector that is down must not hold the command. It
// prints an error to stderr after the command's name.
func (e *Exporter) Shutdown(stderr io.Writer, command string) {
	if e == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := errors.Join(e.Tracer.Shutdown(ctx), e.Meter.Shutdown(ctx)); err != nil {
		fmt.Fprintf(stderr, "%s: OpenTelemetry export: %v\n", command, err)
	}
}
