package mem_test

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"nameservice.dev/nameservice/conformance"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/mem"
	"nameservice.dev/nameservice/model"
)

// A mutant is the mem driver with one rule broken. The suite must catch
// every one: TestSuiteCatchesMutants runs the suite against each in a child
// process and fails unless the child's suite fails.
type mutant struct {
	*mem.Driver
	rule string
	mu   sync.Mutex
	page map[string]int // List page token -> page number, for drop-third-page
}

var mutantRules = []string{
	"head-accepts-equal-t",     // Above on a head also applies at equal t
	"cas-ignores-payload",      // Equals compares the watermark only
	"retract-skips-status",     // Retract sets the flag but does not bump status
	"list-drops-third-page",    // the third page comes back empty and last
	"create-overwrites",        // Create replaces an existing record (no exclusive create)
	"conflict-without-current", // a failed condition reports a zero current value
	"list-ignores-retracted",   // List returns retracted records when not asked to
	"update-creates-missing",   // Update on an unknown ID creates the record
	"list-drops-failed",        // List leaves unreadable records out of the page
	"list-fails-on-failed",     // an unreadable record fails the whole page
}

func (m *mutant) Update(ctx context.Context, id model.ID, c model.Concern, cond driver.Condition, next model.Value) (driver.Outcome, error) {
	switch {
	case m.rule == "head-accepts-equal-t" && c == model.Head && cond.Kind == driver.Above:
		cond = driver.IfAtLeast()
	case m.rule == "cas-ignores-payload" && cond.Kind == driver.Equals:
		cur, err := m.Driver.Get(ctx, id)
		if err == nil && cur.Value(c) != nil && cur.Value(c).V == cond.Expected.V {
			cond.Expected = *cur.Value(c)
		}
	case m.rule == "update-creates-missing":
		if _, err := m.Driver.Get(ctx, id); err != nil {
			_ = m.Driver.Create(ctx, model.NewLedger(id, 0))
		}
	}
	out, err := m.Driver.Update(ctx, id, c, cond, next)
	if m.rule == "conflict-without-current" && err == nil && !out.Applied {
		out.Current = model.Value{}
	}
	return out, err
}

func (m *mutant) Retract(ctx context.Context, id model.ID, at time.Time) error {
	if m.rule != "retract-skips-status" {
		return m.Driver.Retract(ctx, id, at)
	}
	r, err := m.Driver.Get(ctx, id)
	if err != nil {
		return err
	}
	r.Retracted = true
	if err := m.Driver.Delete(ctx, id); err != nil {
		return err
	}
	return m.Driver.Create(ctx, r)
}

func (m *mutant) Create(ctx context.Context, rec *model.Record) error {
	if m.rule == "create-overwrites" {
		_ = m.Driver.Delete(ctx, rec.ID)
	}
	return m.Driver.Create(ctx, rec)
}

func (m *mutant) List(ctx context.Context, opts driver.ListOptions) (*driver.Page, error) {
	if m.rule == "list-ignores-retracted" {
		opts.IncludeRetracted = true
	}
	m.mu.Lock()
	n := m.page[opts.PageToken] + 1
	m.mu.Unlock()
	if m.rule == "list-drops-third-page" && n == 3 {
		return &driver.Page{}, nil
	}
	p, err := m.Driver.List(ctx, opts)
	if err == nil && len(p.Failed) > 0 {
		switch m.rule {
		case "list-drops-failed":
			p.Failed = nil
		case "list-fails-on-failed":
			return nil, p.Failed[0]
		}
	}
	if err == nil && p.NextPageToken != "" {
		m.mu.Lock()
		m.page[p.NextPageToken] = n
		m.mu.Unlock()
	}
	return p, err
}

// TestMutantConformance runs the suite against the mutant named by
// $NS_MUTANT; it is the child of TestSuiteCatchesMutants and does nothing on
// its own.
func TestMutantConformance(t *testing.T) {
	rule := os.Getenv("NS_MUTANT")
	if rule == "" {
		return
	}
	conformance.Run(t, exactListings{func(context.Context, *testing.T) (conformance.Opener, conformance.CorruptFunc, error) {
		s := mem.NewStore()
		open := func(context.Context) (driver.Driver, error) {
			return &mutant{Driver: s.Open(), rule: rule, page: map[string]int{}}, nil
		}
		return open, func(_ context.Context, id model.ID) error { return s.Corrupt(id) }, nil
	}})
}

func TestSuiteCatchesMutants(t *testing.T) {
	for _, rule := range mutantRules {
		t.Run(rule, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run=^TestMutantConformance$", "-test.count=1", "-test.failfast")
			cmd.Env = append(os.Environ(), "NS_MUTANT="+rule)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the suite passed a driver whose %s; it must fail", rule)
			}
			failed := failedCases(string(out))
			if len(failed) == 0 {
				t.Fatalf("child failed without a failing case:\n%s", out)
			}
			t.Logf("caught by %s", failed[0])
		})
	}
}

func failedCases(out string) []string {
	var cases []string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[0] == "---" && f[1] == "FAIL:" && strings.Count(f[2], "/") == 2 {
			cases = append(cases, f[2])
		}
	}
	slices.Sort(cases)
	return cases
}
