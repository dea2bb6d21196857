package conformance_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"nameservice.dev/nameservice/conformance"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/mem"
)

// TestCheckInterruptedCaseIsNoFailure: a case that the interrupt (SIGINT,
// a closed pipe) stops while it runs fails on its canceled context, which
// says nothing of the store: it is reported skipped as interrupted, and the
// run as interrupted, never as a broken guarantee.
func TestCheckInterruptedCaseIsNoFailure(t *testing.T) {
	store := mem.NewStore()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	open := func(context.Context) (driver.Driver, error) {
		once.Do(cancel) // the interrupt arrives as the first case starts
		return store.Open(), nil
	}
	rep := conformance.Check(ctx, open, conformance.CheckOptions{Prefix: "i/", Groups: []string{"Lifecycle"}, CaseTimeout: time.Minute})
	if !rep.Interrupted {
		t.Errorf("the run is not reported interrupted: %+v", rep)
	}
	for _, g := range rep.Groups {
		for _, c := range g.Cases {
			if c.Status == conformance.Fail {
				t.Errorf("%s/%s failed on the interrupt, as a broken guarantee: %s", g.Name, c.Name, c.Message)
			}
		}
	}
}
