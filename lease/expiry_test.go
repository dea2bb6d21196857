package lease_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/mem"
	"nameservice.dev/nameservice/lease"
	"nameservice.dev/nameservice/model"
)

// stalling is a memory store whose writes, once stalled, wait until
// resumed: a store that stops answering (an emulator sweeping its blobs,
// a partition) while a refresh is on its way.
type stalling struct {
	driver.Driver
	stalled atomic.Bool
	resume  chan struct{}
}

func (s *stalling) Update(ctx context.Context, id model.ID, c model.Concern, cond driver.Condition, next model.Value) (driver.Outcome, error) {
	if s.stalled.Load() {
		select {
		case <-s.resume:
		case <-ctx.Done():
			return driver.Outcome{}, ctx.Err()
		}
	}
	return s.Driver.Update(ctx, id, c, cond, next)
}

// TestLostAtExpiryWhileRefreshWaits: a lease whose refresh gets no answer
// is lost when its TTL runs out, not when the store answers: the work it
// guards must stop while the store is silent. The refresh that lands
// afterwards does not revive it.
func TestLostAtExpiryWhileRefreshWaits(t *testing.T) {
	ctx := context.Background()
	store := &stalling{Driver: mem.NewStore().Open(), resume: make(chan struct{})}
	ns := nameservice.New(store)
	defer ns.Close()
	if err := ns.Init(ctx, "db"); err != nil {
		t.Fatal(err)
	}
	const ttl = 300 * time.Millisecond
	l, err := lease.Acquire(ctx, ns, "db", lease.Options{Name: "index", Holder: "a", TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	store.stalled.Store(true)
	refreshed := make(chan error, 1)
	go func() { refreshed <- l.Refresh(ctx) }()
	select {
	case <-l.Lost():
	case <-time.After(30 * time.Second):
		t.Fatal("the lease was not lost 30 s after its TTL of 300 ms, while a refresh waited for the store")
	}
	close(store.resume)
	if err := <-refreshed; !errors.Is(err, lease.ErrLost) {
		t.Fatalf("the refresh that landed after expiry = %v, want ErrLost", err)
	}
}
