package conformance_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"nameservice.dev/nameservice/conformance"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/mem"
)

// TestCheckReportsFailures: with a store that cannot be opened, every case
// that runs fails with the harness's message, and the run goes on to the
// end instead of stopping at the first Fatal.
func TestCheckReportsFailures(t *testing.T) {
	broken := func(context.Context) (driver.Driver, error) { return nil, errors.New("no store here") }
	var progress []string
	rep := conformance.Check(context.Background(), broken, conformance.CheckOptions{
		Prefix: "p/", Quick: true, Progress: func(g conformance.GroupResult) { progress = append(progress, g.Name) },
	})
	if !rep.Failed() || rep.Interrupted || len(rep.Groups) != len(progress) || len(rep.Groups) < 10 {
		t.Fatalf("report: failed %v, interrupted %v, %d groups, progress %v", rep.Failed(), rep.Interrupted, len(rep.Groups), progress)
	}
	for _, g := range rep.Groups {
		if g.Guarantee == "" {
			t.Errorf("group %s names no guarantee", g.Name)
		}
		for _, c := range g.Cases {
			switch {
			case g.Skipped != "":
				if c.Status != conformance.Skip {
					t.Errorf("%s/%s: %s in a skipped group", g.Name, c.Name, c.Status)
				}
			case c.Status != conformance.Fail || !strings.Contains(c.Message, "no store here"):
				t.Errorf("%s/%s: %s %q, want a failure naming the harness error", g.Name, c.Name, c.Status, c.Message)
			}
		}
	}
}

// TestCheckQuickAndInterrupt: the quick subset is smaller than the suite
// and passes on mem; a canceled context runs nothing and says so.
func TestCheckQuickAndInterrupt(t *testing.T) {
	store := mem.NewStore()
	open := func(context.Context) (driver.Driver, error) { return store.Open(), nil }
	rep := conformance.Check(context.Background(), open, conformance.CheckOptions{Prefix: "q/", Quick: true, CaseTimeout: time.Minute})
	if rep.Failed() {
		t.Fatalf("quick run on mem failed: %+v", rep)
	}
	quick := count(rep)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep = conformance.Check(ctx, open, conformance.CheckOptions{Prefix: "i/"})
	if !rep.Interrupted || !rep.Failed() {
		t.Fatalf("canceled run: interrupted %v, failed %v", rep.Interrupted, rep.Failed())
	}
	for _, g := range rep.Groups {
		if n := g.Count(conformance.Skip); n != len(g.Cases) {
			t.Errorf("canceled run ran %d cases of %s", len(g.Cases)-n, g.Name)
		}
	}
	if all := count(rep); quick >= all {
		t.Errorf("quick subset has %d cases, the suite %d", quick, all)
	}
}

func count(r conformance.Report) int {
	n := 0
	for _, g := range r.Groups {
		n += len(g.Cases)
	}
	return n
}

// contractOnly is a driver with the contract's methods alone: every
// optional capability of the memory driver it wraps is hidden.
type contractOnly struct{ driver.Driver }

// TestOptionalCapabilities: a driver without Brancher, Collector, a commit
// index or a change feed passes the quick suite; the Branches and Collect
// groups run and pass by checking that the API answers ErrUnsupported.
func TestOptionalCapabilities(t *testing.T) {
	store := mem.NewStore()
	open := func(context.Context) (driver.Driver, error) { return contractOnly{store.Open()}, nil }
	rep := conformance.Check(context.Background(), open, conformance.CheckOptions{Prefix: "o/", Quick: true, CaseTimeout: time.Minute})
	if rep.Failed() {
		t.Fatalf("quick run on a contract-only driver failed: %+v", rep)
	}
	ran := map[string]int{}
	for _, g := range rep.Groups {
		for _, c := range g.Cases {
			if c.Status == conformance.Pass {
				ran[g.Name]++
			}
		}
	}
	if ran["Branches"] == 0 || ran["Collect"] == 0 {
		t.Fatalf("passing cases by group %v: want the Branches and Collect groups run", ran)
	}
}
