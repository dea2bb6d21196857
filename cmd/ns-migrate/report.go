package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// Results of a report line.
const (
	resultDone     = "done"     // the action was carried out (or there was nothing to do)
	resultPlanned  = "planned"  // --dry-run: the action was only planned
	resultConflict = "conflict" // not written: the target is ahead or diverged
	resultFailed   = "failed"   // an error; see the error field
	resultSame     = "same"     // verify: identical record JSON
	resultDiffers  = "differs"  // verify: the records differ (or the target's is missing)
)

// reportLine is one line of --report: what happened to one record.
type reportLine struct {
	ID     string `json:"id"`
	Action string `json:"action"`
	Result string `json:"result"`
	Error  string `json:"error,omitempty"`
}

// reporter writes --report lines.
type reporter struct {
	f *os.File
	w *bufio.Writer
}

// openReport opens path for the report: appended to when it is also the
// --resume file (so it keeps the whole history), else truncated. Without a
// path there is no report (a nil reporter).
func openReport(path string, appendTo bool) (*reporter, error) {
	if path == "" {
		return nil, nil
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if appendTo {
		flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return nil, fmt.Errorf("--report: %w", err)
	}
	return &reporter{f: f, w: bufio.NewWriter(f)}, nil
}

func (r *reporter) write(l reportLine) error {
	if r == nil {
		return nil
	}
	return json.NewEncoder(r.w).Encode(l) // one line
}

func (r *reporter) close() error {
	if r == nil {
		return nil
	}
	if err := cmp.Or(r.w.Flush(), r.f.Close()); err != nil {
		return fmt.Errorf("--report %s: %w", r.f.Name(), err)
	}
	return nil
}

// readDone returns the IDs a previous report shows done: copied, skipped or
// advanced. Planned, conflicting and failed records are done again.
func readDone(path string) (map[string]bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--resume: %w", err)
	}
	defer f.Close()
	return parseDone(f, path)
}

func parseDone(r io.Reader, path string) (map[string]bool, error) {
	done := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var l reportLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, fmt.Errorf("--resume %s:%d: not a report line: %v", path, n, err)
		}
		if l.Result == resultDone && l.ID != "" {
			done[l.ID] = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("--resume %s: %w", path, err)
	}
	return done, nil
}
