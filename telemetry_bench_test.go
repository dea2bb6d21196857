package nameservice_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/fs"
	"nameservice.dev/nameservice/drivers/mem"
	"nameservice.dev/nameservice/model"
)

// BenchmarkTelemetry measures an applied PublishCommit with telemetry off
// (no option: no wrapper), with no-op providers, and with the SDK sampling
// every call or none, beside the raw driver call in the same run, on mem
// (where any overhead shows) and fs (a real push: two fsyncs), at two
// address sizes.
//
//	go test -run '^$' -bench Telemetry -count 6 . | benchstat -col /mode -
func BenchmarkTelemetry(b *testing.B) {
	for _, backend := range []string{"mem", "fs"} {
		for _, size := range []int{64, 4096} {
			for _, mode := range []string{"raw", "off", "noop", "sdk-none", "sdk-all"} {
				b.Run(fmt.Sprintf("backend=%s/address=%d/mode=%s", backend, size, mode), func(b *testing.B) {
					benchPublish(b, openBench(b, backend), size, mode)
				})
			}
		}
	}
}

func openBench(b *testing.B, backend string) driver.Driver {
	if backend == "mem" {
		return mem.NewStore().Open()
	}
	d, err := fs.Open(context.Background(), fs.Config{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = d.Close() })
	return d
}

func benchOptions(b *testing.B, mode string) []nameservice.Option {
	switch mode {
	case "noop":
		return []nameservice.Option{nameservice.WithTracerProvider(tracenoop.NewTracerProvider()),
			nameservice.WithMeterProvider(metricnoop.NewMeterProvider())}
	case "sdk-none", "sdk-all":
		sampler := sdktrace.NeverSample()
		if mode == "sdk-all" {
			sampler = sdktrace.AlwaysSample()
		}
		// A batcher, as a service exports: the call only queues its span.
		tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sampler), sdktrace.WithBatcher(tracetest.NewNoopExporter()))
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		b.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })
		return []nameservice.Option{nameservice.WithTracerProvider(tp), nameservice.WithMeterProvider(mp)}
	}
	return nil
}

func benchPublish(b *testing.B, d driver.Driver, size int, mode string) {
	ctx := context.Background()
	ns := nameservice.New(d, benchOptions(b, mode)...)
	if err := ns.Init(ctx, "bench"); err != nil {
		b.Fatal(err)
	}
	id := model.ID{Name: "bench", Branch: "main"}
	addr := "fluree:file://" + strings.Repeat("a", size-len("fluree:file://"))
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		t := int64(i + 1)
		var out nameservice.Outcome
		var err error
		if mode == "raw" {
			out, err = d.Update(ctx, id, model.Head, driver.IfAbove(), model.RefValue(addr, t))
		} else {
			out, err = ns.PublishCommit(ctx, "bench", t, addr)
		}
		if err != nil || !out.Applied {
			b.Fatalf("push %d: %+v, %v", t, out, err)
		}
	}
}
