package testenv

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/model"
)

// ListSizesEnv names the record counts the listing benchmarks run,
// comma-separated (scripts/listbench.sh sets it).
const ListSizesEnv = "NS_BENCH_LIST_SIZES"

// ListSizes returns the record counts of NS_BENCH_LIST_SIZES, by default
// 1000 and 10000.
func ListSizes(tb testing.TB) []int {
	tb.Helper()
	spec := cmp.Or(os.Getenv(ListSizesEnv), "1000,10000")
	var sizes []int
	for _, f := range strings.Split(spec, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			tb.Fatalf("%s: %q is not a positive number", ListSizesEnv, f)
		}
		sizes = append(sizes, n)
	}
	return sizes
}

var nsBinary = sync.OnceValues(func() (string, error) { return build("ns", "nameservice.dev/nameservice/cmd/ns") })

// build builds pkg into a new temporary directory as name, without version
// control stamps, as scripts/release.sh builds (the docs show its output).
func build(name, pkg string) (string, error) {
	dir, err := os.MkdirTemp("", "ns-cli-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, name)
	if out, err := exec.Command("go", "build", "-buildvcs=false", "-o", bin, pkg).CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", pkg, err, out)
	}
	return bin, nil
}

// lineCounter counts the lines written to it.
type lineCounter struct{ n int }

func (c *lineCounter) Write(p []byte) (int, error) {
	c.n += bytes.Count(p, []byte{'\n'})
	return len(p), nil
}

// ListCLI lists url as an operator would, `ns --url URL list ARGS...` in a
// process of its own (inheriting the environment), its output counted, not
// kept, and returns the child's peak resident set in MB. It fails when the
// command fails or prints fewer than want records.
func ListCLI(tb testing.TB, want int, url string, args ...string) (peakRSSMB float64) {
	tb.Helper()
	cmd := exec.Command(NSBinary(tb), append([]string{"--url", url, "list"}, args...)...)
	var stderr strings.Builder
	var lines lineCounter
	cmd.Stdout, cmd.Stderr = &lines, &stderr
	if err := cmd.Start(); err != nil {
		tb.Fatalf("ns list: %v", err)
	}
	hwm := watchHWM(cmd.Process.Pid)
	err := cmd.Wait()
	peakKB := hwm()
	if err != nil {
		tb.Fatalf("ns list: %v\n%s", err, stderr.String())
	}
	if peakKB == 0 {
		// No /proc: ru_maxrss, an upper bound (see watchHWM).
		ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		if !ok {
			tb.Fatal("ns list: no rusage for the child")
		}
		peakKB = ru.Maxrss
	}
	if lines.n < want {
		tb.Fatalf("ns list printed %d records, want %d", lines.n, want)
	}
	return float64(peakKB) / 1024
}

// watchHWM reads the VmHWM of process pid every 5 ms until the returned
// function is called, which returns the highest value read in kB (0 when
// none could be read). The child's ru_maxrss is no use: os/exec starts it
// with vfork, and Linux carries the parent's high-water mark across the
// exec into it.
func watchHWM(pid int) func() int64 {
	var peak int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		for !stop.Load() {
			kb, _ := statusKB("/proc/"+strconv.Itoa(pid)+"/status", "VmHWM") // 0 when unreadable
			peak = max(peak, kb)
			time.Sleep(5 * time.Millisecond)
		}
	})
	return func() int64 {
		stop.Store(true)
		wg.Wait()
		return peak
	}
}

// statusKB returns the field named key, in kB, of the /proc status file
// at path.
func statusKB(path, key string) (int64, error) {
	status, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, key+":"); ok {
			return strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s in %s", key, path)
}

// PeakRSS returns the peak resident set size, in MB, of this process while
// f runs, and the resident set just before f (what the process held
// already: a mem store, for one), once the Go runtime returned its free
// memory. See peakRSS.
func PeakRSS(tb testing.TB, f func()) (peak, before float64) {
	tb.Helper()
	debug.FreeOSMemory()
	return peakRSS(tb, "/proc/self", "", f)
}

// peakRSS runs f and returns the peak resident set of the process whose
// /proc directory is dir during f, and its resident set just before, in
// MB: the kernel's high-water mark (VmHWM), reset before f through the
// process's clear_refs. Both are -1 where that file is not writable.
func peakRSS(tb testing.TB, dir, of string, f func()) (peak, before float64) {
	tb.Helper()
	if err := os.WriteFile(dir+"/clear_refs", []byte("5"), 0); err != nil {
		tb.Logf("peak RSS%s not measured: %v", of, err)
		f()
		return -1, -1
	}
	mb := func(key string) float64 {
		kb, err := statusKB(dir+"/status", key)
		Must(tb, err)
		return float64(kb) / 1024
	}
	before = mb("VmRSS")
	f()
	return mb("VmHWM"), before
}

// ListAll lists every record matching opts through d, page after page, and
// returns how many records and how many failures (Page.Failed) it saw.
func ListAll(ctx context.Context, d driver.Driver, opts driver.ListOptions) (records, failed int, err error) {
	for {
		p, err := d.List(ctx, opts)
		if err != nil {
			return records, failed, err
		}
		records += len(p.Records)
		failed += len(p.Failed)
		if p.NextPageToken == "" {
			return records, failed, nil
		}
		opts.PageToken = p.NextPageToken
	}
}

// ReportList reports a listing benchmark's figures under the names
// scripts/listbench.sh reads.
func ReportList(b *testing.B, list, raw []time.Duration, rssMB float64) {
	m, r := MedianMS(list), MedianMS(raw)
	b.ReportMetric(m, "list-ms")
	b.ReportMetric(r, "raw-ms")
	b.ReportMetric(m/r, "ratio")
	b.ReportMetric(rssMB, "rss-MB")
	b.ReportMetric(0, "ns/op")
}

// MedianMS returns the median of l in milliseconds, 0 for none.
func MedianMS(l []time.Duration) float64 { return quantileMS(l, 0.5) }

// quantileMS returns the q quantile of l in milliseconds, 0 for none.
func quantileMS(l []time.Duration, q float64) float64 {
	if len(l) == 0 {
		return 0
	}
	l = slices.Clone(l)
	slices.Sort(l)
	return float64(l[min(len(l)-1, int(q*float64(len(l))))]) / float64(time.Millisecond)
}

// SeedCopies writes n records into the file store at dir, which d opens: d
// creates tmpl, whose files are copied n times under the names
// fmt.Sprintf(nameFormat, i) (far quicker than n creates and their fsyncs).
func SeedCopies(tb testing.TB, d driver.Driver, dir string, tmpl *model.Record, nameFormat string, n int) {
	tb.Helper()
	Must(tb, d.Create(context.Background(), tmpl))
	src := filepath.Join(dir, "ns@v2", tmpl.ID.Name)
	ents, err := os.ReadDir(src)
	Must(tb, err)
	files := map[string]string{}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".json") {
			data, err := os.ReadFile(filepath.Join(src, e.Name()))
			Must(tb, err)
			files[e.Name()] = string(data)
		}
	}
	Must(tb, os.RemoveAll(src))
	for i := range n {
		name := fmt.Sprintf(nameFormat, i)
		sub := filepath.Join(dir, "ns@v2", name)
		Must(tb, os.MkdirAll(sub, 0o755))
		for f, data := range files {
			Must(tb, os.WriteFile(filepath.Join(sub, f), []byte(strings.ReplaceAll(data, `"`+tmpl.ID.Name, `"`+name)), 0o644))
		}
	}
}

// BenchVsRaw runs b.N rounds, each timing op(i) and then raw(i), the SDK
// or syscall baseline of the same work, and reports the p50 and p99 of
// both in milliseconds, and their ratios: name-p50-ms, rawName-p50-ms,
// p50-ratio, and the same for p99; no ns/op of its own. op and raw fail b
// themselves.
func BenchVsRaw(b *testing.B, name string, op func(i int), rawName string, raw func(i int)) {
	lat := make([]time.Duration, 0, b.N)
	base := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		op(i)
		lat = append(lat, time.Since(start))
		start = time.Now()
		raw(i)
		base = append(base, time.Since(start))
	}
	b.StopTimer()
	for _, p := range []struct {
		name string
		q    float64
	}{{"p50", 0.50}, {"p99", 0.99}} {
		mine, theirs := quantileMS(lat, p.q), quantileMS(base, p.q)
		b.ReportMetric(mine, name+"-"+p.name+"-ms")
		b.ReportMetric(theirs, rawName+"-"+p.name+"-ms")
		b.ReportMetric(mine/theirs, p.name+"-ratio")
	}
	b.ReportMetric(0, "ns/op")
}
