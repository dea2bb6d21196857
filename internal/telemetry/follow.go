package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
)

// FollowContext returns a TracerProvider for instrumentation installed when
// a client is built, before anyone knows whether its calls will be traced
// (the AWS SDK's otelaws middleware): each span starts with the provider of
// the span in its context, that is, as a child of the instrumented driver
// call that sent the request, with that call's provider. Without a
// recording span in the context it starts nothing.
func FollowContext() trace.TracerProvider { return followProvider{} }

type followProvider struct{ embedded.TracerProvider }

func (followProvider) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return followTracer{name: name, opts: opts}
}

type followTracer struct {
	embedded.Tracer
	name string
	opts []trace.TracerOption
}

func (t followTracer) Start(ctx context.Context, spanName string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		// Ending it is a no-op, and it carries the context on unchanged.
		return ctx, parent
	}
	return parent.TracerProvider().Tracer(t.name, t.opts...).Start(ctx, spanName, opts...)
}
