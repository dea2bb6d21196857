package server

import (
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Traced returns s as an http.Handler that also reports to OpenTelemetry:
// a server span per request, named by its route and continuing the trace
// the client sent (prop extracts it, e.g. W3C traceparent), and the HTTP
// server metrics. The driver calls a request makes are children of its span
// when s's NameService was built with the same providers. The probes
// (/healthz, /readyz, /metrics) are not traced.
func (s *Server) Traced(tp trace.TracerProvider, mp metric.MeterProvider, prop propagation.TextMapPropagator) http.Handler {
	return otelhttp.NewHandler(s, "ns serve",
		otelhttp.WithTracerProvider(tp), otelhttp.WithMeterProvider(mp), otelhttp.WithPropagators(prop),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return routeLabel(s.mux, r) }),
		otelhttp.WithFilter(func(r *http.Request) bool {
			switch r.URL.Path {
			case "/healthz", "/readyz", "/metrics":
				return false
			}
			return true
		}))
}
