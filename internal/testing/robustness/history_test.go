package robustness

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/model"
)

// Event is one operation as it happened: its client, input and output, and
// its call and return times in nanoseconds since the history began.
type Event struct {
	Client       int
	In           Input
	Out          Output
	Call, Return int64
}

// History records the events of concurrent clients. It is safe for
// concurrent use.
type History struct {
	start  time.Time
	mu     sync.Mutex
	events []Event
}

// NewHistory starts an empty history.
func NewHistory() *History { return &History{start: time.Now()} }

func (h *History) now() int64 { return int64(time.Since(h.start)) }

// Do calls f as client's operation in, recording its call and return
// times and its output.
func (h *History) Do(client int, in Input, f func() Output) Output {
	call := h.now()
	out := f()
	ret := h.now()
	h.mu.Lock()
	h.events = append(h.events, Event{Client: client, In: in, Out: out, Call: call, Return: ret})
	h.mu.Unlock()
	return out
}

// Events returns a copy of the recorded events.
func (h *History) Events() []Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Event(nil), h.events...)
}

// Operations returns the history as porcupine operations, each projected
// onto the concerns it touches. An operation with an unknown outcome
// returns after every other one, at the end of the history. Left out, as
// they constrain nothing: a Lookup that failed, and an update with an
// unknown outcome whose value no operation saw (see unseen).
func (h *History) Operations() []porcupine.Operation {
	events := h.Events()
	var end int64
	for _, e := range events {
		end = max(end, e.Return)
	}
	seen := observed(events)
	var ops []porcupine.Operation
	for _, e := range events {
		if e.Out.Unknown && (e.In.Kind == Lookup || unseen(e.In, seen)) {
			continue
		}
		ret := e.Return
		if e.Out.Unknown {
			ret = end + 1
		}
		for _, c := range touches(e.In) {
			ops = append(ops, porcupine.Operation{ClientId: e.Client, Input: op{e.In, c}, Call: e.Call, Output: e.Out, Return: ret})
		}
	}
	return ops
}

// observed returns the values each ID's concerns were seen to hold: read
// by a Lookup, reported current by an update not applied, or expected by
// a compare-and-set applied.
func observed(events []Event) map[partKey][]model.Value {
	seen := map[partKey][]model.Value{}
	for _, e := range events {
		switch {
		case e.Out.Unknown || e.Out.NotFound:
		case e.In.Kind == Lookup:
			for _, c := range model.Concerns {
				if v := e.Out.Record.Value(c); v != nil {
					seen[partKey{e.In.ID, c}] = append(seen[partKey{e.In.ID, c}], *v)
				}
			}
		case !e.Out.Applied:
			seen[partKey{e.In.ID, e.In.Concern}] = append(seen[partKey{e.In.ID, e.In.Concern}], e.Out.Current)
		case e.In.Expected != nil:
			seen[partKey{e.In.ID, e.In.Concern}] = append(seen[partKey{e.In.ID, e.In.Concern}], *e.In.Expected)
		}
	}
	return seen
}

// unseen reports whether in is an update whose value no operation saw.
// Such an update, when its outcome is unknown, can be left out of the
// check without changing its verdict: a history with it is linearizable
// when one without it is (it goes last, as if it never landed), and one
// without it is when one with it is (no operation saw its value; an update
// that applied after it on a watermark above or at its own applies on the
// lower one before it too). Porcupine's search grows with every operation
// left open to the end of the history.
func unseen(in Input, seen map[partKey][]model.Value) bool {
	switch in.Kind {
	case Create, Lookup, Purge:
		return false
	}
	for _, v := range seen[partKey{in.ID, in.Concern}] {
		if v.Equal(in.Next) {
			return false
		}
	}
	return true
}

// Stats counts a history's events.
type Stats struct {
	Ops      int               // events recorded
	Kinds    map[Kind]int      // events per kind
	Applied  int               // writes reported applied
	Rejected int               // writes reported not applied (stale or conflicting)
	NotFound int               // events answered ErrNotFound
	Unknown  int               // events that failed with another error
	Codes    map[string]int    // those errors by code
	Example  map[string]string // by code, the first such event, described with its error
	Slowest  time.Duration     // the longest operation
	SlowOp   string            // and what it was
}

// Stats returns the history's counts.
func (h *History) Stats() Stats {
	s := Stats{Kinds: map[Kind]int{}, Codes: map[string]int{}, Example: map[string]string{}}
	for _, e := range h.Events() {
		s.Ops++
		s.Kinds[e.In.Kind]++
		if d := time.Duration(e.Return - e.Call); d > s.Slowest {
			s.Slowest, s.SlowOp = d, describeEvent(e)
		}
		switch {
		case e.Out.Unknown:
			s.Unknown++
			code := e.Out.Code.String()
			if s.Codes[code]++; s.Codes[code] == 1 {
				s.Example[code] = describeEvent(e) + ": " + e.Out.Err
			}
		case e.Out.NotFound:
			s.NotFound++
		case e.In.Kind == Lookup:
		case e.Out.Applied:
			s.Applied++
		default:
			s.Rejected++
		}
	}
	return s
}

// String summarises s on one line.
func (s Stats) String() string {
	var kinds []string
	for k := Create; k <= Purge; k++ {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, s.Kinds[k]))
	}
	var codes []string
	for c, n := range s.Codes {
		codes = append(codes, fmt.Sprintf("%s %d", c, n))
	}
	sort.Strings(codes)
	return fmt.Sprintf("%d ops (%s): %d applied, %d not applied, %d not found, %d unknown outcome %v; slowest %v: %s",
		s.Ops, strings.Join(kinds, ", "), s.Applied, s.Rejected, s.NotFound, s.Unknown, codes, s.Slowest.Round(time.Millisecond), s.SlowOp)
}

// checkTimeout bounds porcupine's search; a check that runs out of time
// fails rather than passes. It is far above what a check takes (well under
// a second for a campaign's run), so that only a search that went wrong
// hits it, not a slow machine.
const checkTimeout = 10 * time.Minute

// ArtifactsEnv names the directory a failing check writes its files to
// (scripts/test.sh sets it inside the run, for CI to keep); unset, the
// system's temporary directory.
const ArtifactsEnv = "NS_TEST_ARTIFACTS"

// Check runs porcupine on h and fails t when the history is not
// linearizable: it prints the failing sub-histories (one ID and concern
// each) into the test's log, and writes the whole history as text and
// porcupine's visualisation as HTML under $NS_TEST_ARTIFACTS, naming both.
func Check(t testing.TB, h *History) {
	t.Helper()
	ops := h.Operations()
	start := time.Now()
	res, info := porcupine.CheckOperationsVerbose(nsModel, ops, checkTimeout)
	switch res {
	case porcupine.Ok:
		t.Logf("linearizable: %d projected operations checked in %v", len(ops), time.Since(start).Round(time.Millisecond))
		return
	case porcupine.Unknown:
		f, err := writeArtifact(t.Name(), ".txt", func(w io.Writer) error { _, err := io.WriteString(w, h.Text()); return err })
		t.Errorf("porcupine could not decide within %v (%d projected operations); history written to %s (%v)", checkTimeout, len(ops), f, err)
		return
	}
	parts := illegalParts(ops, 80)
	files, err := writeArtifacts(t.Name(), h, parts, info)
	if err != nil {
		t.Errorf("writing the failing history: %v", err)
	}
	t.Errorf("history is NOT linearizable (%d projected operations); written to %s\n%s", len(ops), strings.Join(files, " and "), parts)
}

// writeArtifacts writes the history of test name (its failing
// sub-histories, then every event in call order) and the visualisation,
// and returns the files' paths.
func writeArtifacts(name string, h *History, parts string, info porcupine.LinearizationInfo) ([]string, error) {
	text, err := writeArtifact(name, ".txt", func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "%s: NOT linearizable\n%s\n\nfailing sub-histories:\n%s\nevery operation, in call order (ms since %s):\n%s",
			name, h.Stats(), parts, h.start.UTC().Format(time.RFC3339Nano), h.Text())
		return err
	})
	if err != nil {
		return nil, err
	}
	html, err := writeArtifact(name, ".html", func(w io.Writer) error { return porcupine.Visualize(nsModel, info, w) })
	return []string{text, html}, err
}

// writeArtifact writes a new file of test name, ending in ext, under
// $NS_TEST_ARTIFACTS (or the system's temporary directory) with write, and
// returns its absolute path.
func writeArtifact(name, ext string, write func(io.Writer) error) (string, error) {
	dir := os.Getenv(ArtifactsEnv)
	if dir == "" {
		dir = os.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return writeFile(dir, "robustness-"+unsafeName.ReplaceAllString(name, "_")+"-*"+ext, write)
}

// writeFile creates a new file in dir named after pattern (os.CreateTemp),
// fills it with write and returns its absolute path.
func writeFile(dir, pattern string, write func(io.Writer) error) (string, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return "", err
	}
	if err := write(f); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	return filepath.Abs(f.Name())
}

// Text describes every event, one a line, in call order.
func (h *History) Text() string {
	events := h.Events()
	sort.SliceStable(events, func(i, j int) bool { return events[i].Call < events[j].Call })
	var b strings.Builder
	for _, e := range events {
		fmt.Fprintf(&b, "  [%9.3f ms, %9.3f ms] client %d: %s\n", float64(e.Call)/1e6, float64(e.Return)/1e6, e.Client, describeEvent(e))
	}
	return b.String()
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// outcome converts a push's result to an Output.
func outcome(out driver.Outcome, err error) Output {
	if err != nil {
		return failed(err)
	}
	return Output{Applied: out.Applied, Current: out.Current.Clone()}
}

// failed converts an error to an Output: ErrNotFound is a definite answer,
// anything else leaves the outcome unknown.
func failed(err error) Output {
	if model.Code(err) == model.NotFound {
		return Output{NotFound: true, Code: model.NotFound, Err: err.Error()}
	}
	return Output{Unknown: true, Code: model.Code(err), Err: err.Error()}
}

// illegalParts describes the sub-histories (one ID and concern) that are
// not linearizable, one operation a line in call order. It shows where
// each fails: the shortest prefix (in call order) that is not linearizable
// already, with the operations that began before its last one returned;
// of those, the last limit operations and the earlier ones still running
// when they began.
func illegalParts(ops []porcupine.Operation, limit int) string {
	var b strings.Builder
	for _, part := range partition(ops) {
		if !illegal(part) {
			continue
		}
		sort.SliceStable(part, func(i, j int) bool { return part[i].Call < part[j].Call })
		n := 1 + sort.Search(len(part), func(k int) bool { return illegal(part[:k+1]) })
		o := part[0].Input.(op)
		fmt.Fprintf(&b, "sub-history %s %s (%d operations; the first %d are not linearizable already):\n", o.in.ID, o.concern, len(part), n)
		if last := part[n-1]; !last.Output.(Output).Unknown {
			for n < len(part) && part[n].Call < last.Return {
				n++ // began before the last returned: perhaps why it is wrong
			}
		}
		from, skipped := max(0, n-limit), 0
		for i, p := range part[:n] {
			if i < from && p.Return < part[from].Call {
				skipped++
				continue
			}
			if skipped > 0 {
				fmt.Fprintf(&b, "  ... %d operations over before the next ones began\n", skipped)
				skipped = 0
			}
			fmt.Fprintf(&b, "  [%9.3f ms, %9.3f ms] client %d: %s\n", float64(p.Call)/1e6, float64(p.Return)/1e6, p.ClientId, describeOp(p.Input, p.Output))
		}
	}
	return b.String()
}

func illegal(part []porcupine.Operation) bool {
	return porcupine.CheckOperationsTimeout(nsModel, part, checkTimeout) == porcupine.Illegal
}
