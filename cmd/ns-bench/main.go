// Command ns-bench is the nameservice's one benchmark report. It measures
// every driver it can reach, next to the raw operation the driver is built
// on (measured in the same run), and prints Markdown tables:
//
//	scripts/testservers.sh start && eval "$(scripts/testservers.sh env)"
//	go run ./cmd/ns-bench
//
// It starts nothing itself. The memory and filesystem drivers always run
// (the latter in a new temporary directory); DynamoDB runs when
// NAMESERVICE_TEST_DYNAMODB_ENDPOINT names a server (on a new table, deleted
// afterwards), S3 when NAMESERVICE_TEST_S3_ENDPOINT does (on a new bucket,
// removed afterwards). Drivers it cannot reach are listed as skipped.
//
// For each driver: push latency (p50, p99) and throughput of one writer;
// requests per push and per lookup (counted by an http.RoundTripper for the
// AWS drivers; the filesystem's syscalls are not counted); the raw baseline
// and the ratio; contention of head and index writers on one ID, where a
// conflict across the two concerns must never happen; and the cost of
// listing many records.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/mem"
	"nameservice.dev/nameservice/internal/buildinfo"
	"nameservice.dev/nameservice/jsonld"
)

func main() {
	var sz sizes
	flag.IntVar(&sz.pushes, "n", 1000, "timed pushes (and raw calls) per driver")
	flag.IntVar(&sz.writers, "writers", 8, "head writers, and as many index writers, on one ID")
	flag.IntVar(&sz.rounds, "rounds", 50, "pushes per contending writer")
	flag.IntVar(&sz.list, "list", 1000, "records to create and list")
	only := flag.String("only", "", "comma-separated drivers to run (mem, fs-b, fs-c, dynamodb, s3); default all reachable")
	timeout := flag.Duration("timeout", 20*time.Minute, "bound on the whole run")
	version := flag.Bool("version", false, "print the version, commit and Go version, and exit")
	if slices.ContainsFunc(os.Args[1:], func(a string) bool { return a == "-h" || a == "-help" || a == "--help" || a == "--h" }) {
		flag.CommandLine.SetOutput(os.Stdout) // asked for: the usage is the answer, not an error
	}
	flag.Parse()
	if *version {
		fmt.Printf("ns-bench %s\n", buildinfo.Read())
		return
	}
	if sz.pushes < 1 || sz.writers < 1 || sz.rounds < 1 || sz.list < 1 {
		fmt.Fprintln(os.Stderr, "ns-bench: -n, -writers, -rounds and -list must be positive")
		os.Exit(2)
	}
	if err := checkOnly(*only); err != nil {
		fmt.Fprintln(os.Stderr, "ns-bench:", err)
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if !run(ctx, os.Stdout, sz, *only) {
		os.Exit(1)
	}
}

// candidate is a driver ns-bench knows how to set up.
type candidate struct {
	key   string
	env   string // the endpoint variable it needs, if any
	setup func(ctx context.Context, endpoint string) (*target, error)
}

var candidates = []candidate{
	{"mem", "", func(context.Context, string) (*target, error) {
		store := mem.NewStore()
		open := func(context.Context) (driver.Driver, error) { return store.Open(), nil }
		return &target{name: "mem", open: open, close: func() {}}, nil
	}},
	{"fs-b", "", fsTarget(jsonld.LayoutB, "fs (layout B)", "main.json")},
	{"fs-c", "", fsTarget(jsonld.LayoutC, "fs (layout C)", "main.head.json")},
	{"dynamodb", "NAMESERVICE_TEST_DYNAMODB_ENDPOINT", dynamoTarget},
	{"s3", "NAMESERVICE_TEST_S3_ENDPOINT", s3Target},
}

// checkOnly refuses a name of -only that is no driver's, so that a typo is
// not a run of nothing.
func checkOnly(only string) error {
	if only == "" {
		return nil
	}
	var known []string
	for _, c := range candidates {
		known = append(known, c.key)
	}
	for _, k := range strings.Split(only, ",") {
		if !slices.Contains(known, k) {
			return fmt.Errorf("-only: no driver %q (want %s)", k, strings.Join(known, ", "))
		}
	}
	return nil
}

// run measures every reachable driver and prints the report; it returns
// false when a measurement failed.
func run(ctx context.Context, w io.Writer, sz sizes, only string) bool {
	var results []*result
	var skipped []string
	ok := true
	for _, c := range candidates {
		if only != "" && !strings.Contains(","+only+",", ","+c.key+",") {
			continue
		}
		endpoint := os.Getenv(c.env) // the drivers needing none ignore it
		if c.env != "" && endpoint == "" {
			skipped = append(skipped, fmt.Sprintf("%s (%s is not set)", c.key, c.env))
			continue
		}
		fmt.Fprintf(os.Stderr, "ns-bench: %s...\n", c.key)
		r, err := measure(ctx, c, endpoint, sz)
		if err != nil {
			fmt.Fprintf(os.Stderr, "ns-bench: %s: %v\n", c.key, err)
			skipped = append(skipped, fmt.Sprintf("%s (failed: %v)", c.key, err))
			ok = false
			continue
		}
		results = append(results, r)
	}
	report(w, results, skipped, sz)
	return ok && !slices.ContainsFunc(results, func(r *result) bool { return r.cont.crossed > 0 || r.cont.errors > 0 })
}

func measure(ctx context.Context, c candidate, endpoint string, sz sizes) (*result, error) {
	t, err := c.setup(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	defer t.close()
	r := &result{name: t.name, baseline: t.baseline}
	steps := []struct {
		what string
		f    func(context.Context, *target, sizes, *result) error
	}{{"push", measurePush}, {"raw baseline", measureRaw}, {"contention", measureContention}, {"list", measureList}}
	for _, s := range steps {
		if s.what == "raw baseline" && t.raw == nil {
			continue
		}
		if err := s.f(ctx, t, sz, r); err != nil {
			return nil, fmt.Errorf("%s: %w", s.what, err)
		}
	}
	return r, nil
}
