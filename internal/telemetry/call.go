package telemetry

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/model"
)

// Call is one instrumented driver call, found in its context by Retry and
// PreconditionFailed. A nil *Call (of nil Instruments) reports nothing.
type Call struct {
	in      *Instruments
	op      string
	id      model.ID
	concern string
	span    trace.Span
	start   time.Time
	retries atomic.Int64
}

type callKey struct{}

// Start begins call op on record id (zero for none) and concern ("" for
// none): a client span continuing the trace of ctx. The caller must End the
// Call, with the context Start returns. On nil Instruments it returns ctx
// and a nil Call.
func (in *Instruments) Start(ctx context.Context, op string, id model.ID, concern string) (context.Context, *Call) {
	if in == nil {
		return ctx, nil
	}
	c := &Call{in: in, op: op, id: id, concern: concern, start: time.Now()}
	attrs := make([]attribute.KeyValue, 0, len(in.base)+3)
	attrs = append(attrs, in.base...)
	attrs = append(attrs, keyOperation.String(op))
	if !id.IsZero() {
		attrs = append(attrs, keyID.String(id.String()))
	}
	if concern != "" {
		attrs = append(attrs, keyConcern.String(concern))
	}
	name := op
	if in.namespace != "" {
		name += " " + in.namespace
	}
	ctx, c.span = in.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	return context.WithValue(ctx, callKey{}, c), c
}

// End ends the call with outcome (one of the Outcome constants) and err,
// the driver's error: the span's status, the metrics and the log line.
func (c *Call) End(ctx context.Context, outcome string, err error) {
	if c == nil {
		return
	}
	elapsed := time.Since(c.start)
	in := c.in
	c.span.SetAttributes(keyOutcome.String(outcome))
	errType := ""
	if outcome == OutcomeError {
		errType = model.Code(err).String()
		c.span.SetAttributes(keyErrorType.String(errType))
		c.span.RecordError(err)
		c.span.SetStatus(codes.Error, err.Error())
	}
	c.span.End()
	set := []attribute.KeyValue{in.backendKV, keyOperation.String(c.op), keyOutcome.String(outcome)}
	if errType != "" {
		set = append(set, keyErrorType.String(errType))
	}
	opt := metric.WithAttributes(set...)
	in.calls.Add(ctx, 1, opt)
	in.duration.Record(ctx, elapsed.Seconds(), opt)
	if outcome == OutcomeStale || (outcome == OutcomeConflict && c.op == "update") {
		in.conflicts.Add(ctx, 1, metric.WithAttributes(in.backendKV, keyConcern.String(c.concern), keyOutcome.String(outcome)))
	}
	c.log(ctx, outcome, elapsed, err)
}

// log writes one line per call: debug, or warn for an error.
func (c *Call) log(ctx context.Context, outcome string, elapsed time.Duration, err error) {
	l := c.in.log
	level := slog.LevelDebug
	if outcome == OutcomeError {
		level = slog.LevelWarn
	}
	if l == nil || !l.Enabled(ctx, level) {
		return
	}
	attrs := []slog.Attr{slog.String("backend", c.in.backend), slog.String("operation", c.op)}
	if !c.id.IsZero() {
		attrs = append(attrs, slog.String("id", c.id.String()))
	}
	if c.concern != "" {
		attrs = append(attrs, slog.String("concern", c.concern))
	}
	if w, ok := driver.WriteFrom(ctx); ok {
		attrs = append(attrs, slog.String("write", w.ID), slog.Bool("resend", w.Resend))
	}
	attrs = append(attrs, slog.String("outcome", outcome), slog.Duration("duration", elapsed))
	if n := c.retries.Load(); n > 0 {
		attrs = append(attrs, slog.Int64("retries", n))
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	l.LogAttrs(ctx, level, "nameservice call", attrs...)
}

// Retry records that the driver call running under ctx sends a request
// again, for reason ("precondition failed", "answer lost", ...): an event on
// its span and one on the retry counter. Outside an instrumented call it
// does nothing.
func Retry(ctx context.Context, reason string) {
	c, ok := ctx.Value(callKey{}).(*Call)
	if !ok {
		return
	}
	n := c.retries.Add(1)
	c.span.AddEvent("retry", trace.WithAttributes(keyReason.String(reason), keyAttempt.Int64(n+1)))
	c.in.retries.Add(ctx, 1, metric.WithAttributes(c.in.backendKV, keyReason.String(reason)))
}

// PreconditionFailed records that the backend refused a conditional write
// of the call running under ctx (HTTP 412, DynamoDB's
// ConditionalCheckFailed): an event on its span, with what the driver
// does next. Outside an instrumented call it does nothing.
func PreconditionFailed(ctx context.Context, backendCode string) {
	c, ok := ctx.Value(callKey{}).(*Call)
	if !ok {
		return
	}
	c.span.AddEvent("precondition failed", trace.WithAttributes(attribute.String("nameservice.backend.code", backendCode)))
}
