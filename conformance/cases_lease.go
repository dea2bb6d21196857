package conformance

import (
	"context"
	"errors"
	"sort"
	"sync"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/lease"
)

// leaseTTL is long enough that a machine loaded by a parallel -race run
// keeps refreshing in time (3 s lost leases there: S3 in lock mode takes a
// DynamoDB lock and an S3 write per refresh). Check uses CheckOptions.LeaseTTL.
const leaseTTL = 6 * time.Second

func (e *env) leaseOpts(holder string, wait bool) lease.Options {
	return lease.Options{Name: "index", Holder: holder, TTL: e.leaseTTL, Wait: wait, TargetT: 7, State: "indexing"}
}

// holdTTL is the TTL of the cases that release every lease they take: no
// stall of a loaded machine may end one before its release.
const holdTTL = time.Minute

// holdOpts are leaseOpts with at least holdTTL.
func (e *env) holdOpts(holder string, wait bool) lease.Options {
	o := e.leaseOpts(holder, wait)
	o.TTL = max(o.TTL, holdTTL)
	return o
}

var groupLease = group{name: "Lease", guarantee: "leases: one holder at a time, with increasing fencing tokens", alone: true, light: true, cases: []testCase{
	{name: "AcquireHoldRelease", quick: true, run: func(e *env) {
		e.init("db")
		l, err := lease.Acquire(e.ctx, e.ns, e.id("db"), e.holdOpts("a", false))
		e.must(err)
		st := e.lookup("db").Status
		if l.Token() != st.V || st.State() != "indexing" || st.Payload["index_lock"] == nil {
			e.t.Fatalf("after acquire: token %d, status %v", l.Token(), *st)
		}
		e.wantErr(second(lease.Acquire(e.ctx, e.client(), e.id("db"), e.holdOpts("b", false))), lease.ErrHeld)
		e.must(l.Release(e.ctx))
		if st := e.lookup("db").Status; st.Payload["index_lock"] != nil || st.State() != "ready" {
			e.t.Fatalf("after release: status %v, want the lock gone and state ready", *st)
		}
		select {
		case <-l.Lost():
		default:
			e.t.Fatal("Lost() not closed after Release")
		}
		l2, err := lease.Acquire(e.ctx, e.client(), e.id("db"), e.holdOpts("b", false))
		e.must(err)
		if l2.Token() <= l.Token() {
			e.t.Fatalf("fencing token went from %d to %d", l.Token(), l2.Token())
		}
	}},
	{name: "MutualExclusion", run: func(e *env) {
		e.init("db")
		type span struct {
			from, to time.Time
			token    int64
		}
		var mu sync.Mutex
		var spans []span
		runParallel(e, 3, func(i int, c *nameservice.NameService) {
			for range 4 {
				l, err := lease.Acquire(e.ctx, c, e.id("db"), e.holdOpts(string(rune('a'+i)), true))
				if err != nil {
					e.t.Errorf("acquire: %v", err)
					return
				}
				s := span{from: time.Now(), token: l.Token()}
				time.Sleep(5 * time.Millisecond)
				s.to = time.Now()
				mu.Lock()
				spans = append(spans, s)
				mu.Unlock()
				if err := l.Release(e.ctx); err != nil {
					e.t.Errorf("release: %v", err)
					return
				}
			}
		})
		sort.Slice(spans, func(i, j int) bool { return spans[i].from.Before(spans[j].from) })
		for i := 1; i < len(spans); i++ {
			if spans[i].from.Before(spans[i-1].to) {
				e.t.Fatalf("two holders at once: %v and %v", spans[i-1], spans[i])
			}
			if spans[i].token <= spans[i-1].token {
				e.t.Fatalf("fencing tokens not increasing: %d then %d", spans[i-1].token, spans[i].token)
			}
		}
		if len(spans) != 12 {
			e.t.Fatalf("%d leases held, want 12", len(spans))
		}
	}},
	{name: "ExpiredLeaseIsTakenOver", run: func(e *env) {
		e.init("db")
		a, err := lease.Acquire(e.ctx, e.ns, e.id("db"), e.leaseOpts("a", false))
		e.must(err)
		start := time.Now()
		b, err := lease.Acquire(e.ctx, e.client(), e.id("db"), e.leaseOpts("b", true))
		e.must(err)
		if waited := time.Since(start); waited < e.leaseTTL {
			e.t.Fatalf("took over after %v, before the TTL %v", waited, e.leaseTTL)
		}
		select {
		case <-a.Lost():
		case <-time.After(e.leaseTTL):
			e.t.Fatal("the old holder's Lost() did not fire")
		}
		if b.Token() <= a.Token() {
			e.t.Fatalf("fencing token went from %d to %d", a.Token(), b.Token())
		}
		e.wantErr(a.Refresh(e.ctx), lease.ErrLost)
		e.wantErr(a.Release(e.ctx), lease.ErrLost)
		if st := e.lookup("db").Status; st.State() != "indexing" {
			e.t.Fatalf("the old holder's release changed the status: %v", *st)
		}
		e.must(b.Release(e.ctx))
		if st := e.lookup("db").Status; st.State() != "ready" {
			e.t.Fatalf("after the takeover's release: %v, want state ready", *st)
		}
	}},
	{name: "RefreshKeepsTheLease", run: func(e *env) {
		e.init("db")
		a, err := lease.Acquire(e.ctx, e.ns, e.id("db"), e.leaseOpts("a", false))
		e.must(err)
		other := e.client()
		for range 5 { // past the TTL: only the refreshes keep it
			time.Sleep(e.leaseTTL / 4)
			e.must(a.Refresh(e.ctx))
			e.wantErr(second(lease.Acquire(e.ctx, other, e.id("db"), e.leaseOpts("b", false))), lease.ErrHeld)
		}
		ctx, cancel := context.WithTimeout(e.ctx, e.leaseTTL/2)
		defer cancel()
		e.wantErr(second(lease.Acquire(ctx, other, e.id("db"), e.leaseOpts("b", true))), context.DeadlineExceeded)
		e.must(a.Release(e.ctx))
	}},
	{name: "OtherStatusWritesKeepTheLease", run: func(e *env) {
		e.init("db")
		a, err := lease.Acquire(e.ctx, e.ns, e.id("db"), e.holdOpts("a", false))
		e.must(err)
		cur := *e.lookup("db").Status
		next := nameservice.Value{V: cur.V + 1, Payload: cur.Payload.Clone()}
		next.Payload["queue_depth"] = 9
		e.applied(next)(e.client().PushStatus(e.ctx, e.id("db"), cur, next))
		e.must(a.Refresh(e.ctx))
		if st := e.lookup("db").Status; st.Payload["queue_depth"] == nil {
			e.t.Fatalf("refresh dropped another writer's field: %v", *st)
		}
		e.must(a.Release(e.ctx))
	}},
	{name: "RunWhileLeasedCancelsWhenBroken", run: func(e *env) {
		e.init("db")
		err := lease.Run(e.ctx, e.ns, e.id("db"), e.leaseOpts("a", false), func(ctx context.Context, l *lease.Lease) error {
			info, err := lease.Break(e.ctx, e.client(), e.id("db"), "index")
			if err != nil || info == nil || info.Holder != "a" || info.Token != l.Token() {
				e.t.Errorf("break lease = %+v, %v", info, err)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(4 * e.leaseTTL):
				e.t.Error("the work's context was not canceled after the lease was broken")
				return nil
			}
		})
		if !errors.Is(err, lease.ErrLost) {
			e.t.Fatalf("lease.Run = %v, want lease.ErrLost", err)
		}
	}},
	{name: "RunWhileLeasedRefreshesAndReleases", run: func(e *env) {
		e.init("db")
		err := lease.Run(e.ctx, e.ns, e.id("db"), e.leaseOpts("a", false), func(ctx context.Context, l *lease.Lease) error {
			time.Sleep(3 * e.leaseTTL / 2) // outlives the TTL: only refreshes keep it
			if ctx.Err() != nil {
				e.t.Errorf("lease lost while refreshed: %v", ctx.Err())
			}
			if leases := lease.Held(e.lookup("db")); len(leases) != 1 || leases[0].Holder != "a" {
				e.t.Errorf("leases during the work = %+v", leases)
			}
			return nil
		})
		e.must(err)
		if leases := lease.Held(e.lookup("db")); len(leases) != 0 {
			e.t.Fatalf("leases after lease.Run = %+v", leases)
		}
	}},
}}
