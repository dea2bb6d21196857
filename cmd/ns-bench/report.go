package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

// report prints the results as Markdown.
func report(w io.Writer, results []*result, skipped []string, sz sizes) {
	fmt.Fprintf(w, "Machine: %s. Command: `go run ./cmd/ns-bench -n %d -writers %d -rounds %d -list %d`.\n\n",
		machine(), sz.pushes, sz.writers, sz.rounds, sz.list)
	if len(skipped) > 0 {
		fmt.Fprintf(w, "Skipped: %s.\n\n", strings.Join(skipped, "; "))
	}
	pushTable(w, results, sz)
	contentionTable(w, results, sz)
	listTable(w, results, sz)
	fmt.Fprintln(w, "Requests are counted by an http.RoundTripper under the AWS SDK (SDK retries included);"+
		" the filesystem's syscalls are not counted (n/a).")
}

func pushTable(w io.Writer, results []*result, sz sizes) {
	fmt.Fprintf(w, "One writer, %d sequential head publishes after %d warm-up ones; raw baseline the same number of calls:\n\n", sz.pushes, warmup)
	fmt.Fprintln(w, "| driver | push p50 | push p99 | pushes/s | raw baseline | raw p50 | raw p99 | ratio p50 / p99 | requests per push / lookup |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	for _, r := range results {
		raw, ratio := "n/a", "n/a"
		if r.baseline != "" {
			raw = r.baseline
			ratio = fmt.Sprintf("%.2f / %.2f", div(r.push.p50, r.raw.p50), div(r.push.p99, r.raw.p99))
		}
		fmt.Fprintf(w, "| %s | %s | %s | %.0f | %s | %s | %s | %s | %s / %s |\n", r.name,
			dur(r.push.p50), dur(r.push.p99), r.push.perSec, raw, durOrNA(r.raw.p50), durOrNA(r.raw.p99), ratio,
			num(r.pushReq), num(r.lookupReq))
	}
	fmt.Fprintln(w)
}

func contentionTable(w io.Writer, results []*result, sz sizes) {
	fmt.Fprintf(w, "Contention: %d head writers and %d index writers on one ID, each its own client, %d publishes each"+
		" (t from a shared counter per concern, so writers of one concern race):\n\n", sz.writers, sz.writers, sz.rounds)
	fmt.Fprintln(w, "| driver | pushes | pushes/s | stale (same concern) | conflicts across concerns | errors | requests per push |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, r := range results {
		c := r.cont
		fmt.Fprintf(w, "| %s | %d | %.0f | %d | **%d** | %d | %s |\n", r.name, c.pushes, c.perSec, c.stale, c.crossed, c.errors, num(c.requests))
		if c.firstFail != "" {
			fmt.Fprintf(os.Stderr, "ns-bench: %s: contention: %s\n", r.name, c.firstFail)
		}
	}
	fmt.Fprintln(w)
}

func listTable(w io.Writer, results []*result, sz sizes) {
	fmt.Fprintf(w, "Listing %d ledgers (prefix filter, pages of 100):\n\n", sz.list)
	fmt.Fprintln(w, "| driver | time | records/s | requests |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, r := range results {
		req := "n/a"
		if r.list.requests >= 0 {
			req = fmt.Sprint(r.list.requests)
		}
		fmt.Fprintf(w, "| %s | %s | %.0f | %s |\n", r.name, dur(r.list.took), float64(r.list.records)/r.list.took.Seconds(), req)
	}
	fmt.Fprintln(w)
}

func div(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// dur formats d in milliseconds (µs below 0.1 ms).
func dur(d time.Duration) string {
	if d < 100*time.Microsecond {
		return fmt.Sprintf("%.1f µs", float64(d)/float64(time.Microsecond))
	}
	if d >= 10*time.Second {
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}

func durOrNA(d time.Duration) string {
	if d == 0 {
		return "n/a"
	}
	return dur(d)
}

func num(x float64) string {
	if x < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", x)
}

// machine describes the machine: CPU model, cores, memory, OS and Go.
func machine() string {
	cpu, mem := "", ""
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v) + ", "
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		if _, err := fmt.Sscanf(string(b), "MemTotal: %d kB", &kb); err == nil {
			mem = fmt.Sprintf(", %.0f GiB", float64(kb)/(1<<20))
		}
	}
	return fmt.Sprintf("%s%d cores%s, %s/%s, %s", cpu, runtime.NumCPU(), mem, runtime.GOOS, runtime.GOARCH, runtime.Version())
}
