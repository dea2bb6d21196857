// Package lease holds advisory leases on a record's status, built only on
// the portable API (StatusOf and PushStatus), as etcd's concurrency package
// is built on its KV: any backend that passes the conformance suite supports
// them. See docs/leases.md.
package lease

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/internal/driverutil"
)

// Errors of leases; match with errors.Is.
var (
	// ErrHeld is returned by Acquire without Wait when another
	// holder has the lease.
	ErrHeld = errors.New("lease held by another holder")
	// ErrLost is returned by Refresh and Release once the lease is no
	// longer ours: it expired on our clock, or the status no longer carries it.
	ErrLost = errors.New("lease lost")
)

// Options describe a lease on a record's status.
type Options struct {
	Name    string        // the lock's name; stored as status key NAME_lock (e.g. "index" -> index_lock)
	Holder  string        // who holds it, for operators (e.g. "indexer-7f3a")
	TTL     time.Duration // how long the lease lasts without a refresh
	TargetT int64         // optional: the t the holder works towards (index_lock.target_t)
	Wait    bool          // wait for a held lease to be released or to expire, until ctx is done
	State   string        // optional: the status state while held (e.g. "indexing"); restored on Release
}

// Lease is a held lease. It is safe for concurrent use.
//
// Expiry does not depend on synchronised clocks: a holder counts its lease
// valid for TTL from the moment it sent the write that won or refreshed it,
// on its own monotonic clock, while a waiter takes over only after it has
// seen the same status_v unchanged for a full TTL on its own monotonic clock,
// which begins after that write landed. With clocks that run at the same
// rate, the holder's validity always ends before a takeover. The lease is
// advisory: protect the work it guards with Token (see docs/leases.md).
type Lease struct {
	ns    *nameservice.NameService
	id    string
	opts  Options
	token int64

	// writing lets one Refresh or Release at a time write the status,
	// and guards cur.
	writing sync.Mutex
	cur     nameservice.Value // the status we last wrote

	// mu guards the fields below. It is never held across a call to the
	// store, so that expiry ends the lease on time while a refresh is still
	// waiting for its answer.
	mu         sync.Mutex
	validUntil time.Time
	timer      *time.Timer
	lost       chan struct{}
	ended      bool
}

// Token returns the lease's fencing token: the status_v at which it was won.
// Tokens strictly increase from one holder to the next, so a resource that
// remembers the highest token it has seen can refuse a holder that lost its
// lease without knowing it.
func (l *Lease) Token() int64 { return l.token }

// Lost returns a channel closed once the lease is no longer valid: it
// expired before a refresh, a refresh found it taken, or it was released.
func (l *Lease) Lost() <-chan struct{} { return l.lost }

func lockKey(name string) string { return name + "_lock" }

// lock is the lease as stored in the status payload.
type lock struct {
	Holder     string `json:"holder"`
	TargetT    int64  `json:"target_t,omitempty"`
	AcquiredAt int64  `json:"acquired_at"`
	ExpiresAt  int64  `json:"expires_at"`
	Refreshed  int64  `json:"refreshed_at,omitempty"`
	TTLMillis  int64  `json:"ttl_ms"`
	Token      int64  `json:"token"`
	PrevState  string `json:"prev_state,omitempty"`
}

func readLock(p nameservice.Object, name string) (*lock, bool) {
	raw, ok := p[lockKey(name)]
	if !ok || raw == nil {
		return nil, false
	}
	b, err := json.Marshal(raw)
	var l lock
	if err != nil || json.Unmarshal(b, &l) != nil {
		return &lock{}, true // present but unreadable: treat as held, expiring after the default wait
	}
	return &l, true
}

func (l *lock) object() map[string]any {
	b, _ := json.Marshal(l)
	o, _ := nameservice.ParseObject(b)
	return o
}

// Acquire takes the lease opts.Name on the status of id. When another
// holder has it, it returns an error wrapping ErrHeld, or with
// opts.Wait waits until the lease is released or has expired (see Lease) and
// takes it over, until ctx is done. It returns ErrNotFound for an unknown ID.
func Acquire(ctx context.Context, ns *nameservice.NameService, id string, opts Options) (*Lease, error) {
	if opts.Name == "" || opts.Holder == "" || opts.TTL <= 0 {
		return nil, fmt.Errorf("%w: a lease needs a Name, a Holder and a positive TTL",
			nameservice.ErrInvalidArgument)
	}
	var seenV int64 = -1
	var seenAt time.Time
	for {
		cur, err := ns.StatusOf(ctx, id)
		if err != nil {
			return nil, err
		}
		held, isHeld := readLock(cur.Payload, opts.Name)
		if isHeld {
			ttl := driverutil.Positive(time.Duration(held.TTLMillis)*time.Millisecond, opts.TTL)
			if cur.V != seenV {
				seenV, seenAt = cur.V, time.Now()
			}
			if time.Since(seenAt) < ttl {
				if !opts.Wait {
					return nil, fmt.Errorf("acquire lease %s on %s: %w: %s since status_v %d", opts.Name, id, ErrHeld, held.Holder, cur.V)
				}
				if err := driverutil.Sleep(ctx, min(ttl/4, 250*time.Millisecond)); err != nil {
					return nil, fmt.Errorf("acquire lease %s on %s: %w", opts.Name, id, err)
				}
				continue
			}
		}
		l, err := tryAcquire(ctx, ns, id, opts, cur, held)
		if l != nil || err != nil {
			return l, err
		}
	}
}

// tryAcquire compare-and-sets the lock into cur; a nil lease and nil error
// mean the status moved and the caller should look again.
func tryAcquire(ctx context.Context, ns *nameservice.NameService, id string, opts Options, cur nameservice.Value, prev *lock) (*Lease, error) {
	sent := time.Now()
	now := ns.Now()
	lk := &lock{
		Holder: opts.Holder, TargetT: opts.TargetT, AcquiredAt: now.Unix(),
		ExpiresAt: now.Add(opts.TTL).Unix(), TTLMillis: opts.TTL.Milliseconds(), Token: cur.V + 1,
	}
	next := nameservice.Value{V: cur.V + 1, Payload: cur.Payload.Clone()}
	if opts.State != "" {
		lk.PrevState = cur.State()
		if prev != nil && prev.PrevState != "" {
			lk.PrevState = prev.PrevState // a takeover restores the state from before the first holder
		}
		next.Payload["state"] = opts.State
	}
	next.Payload[lockKey(opts.Name)] = lk.object()
	out, err := ns.PushStatus(ctx, id, cur, next)
	if err != nil || !out.Applied {
		return nil, err
	}
	l := &Lease{ns: ns, id: id, opts: opts, token: next.V, cur: out.Current, lost: make(chan struct{})}
	l.mu.Lock() // the expiry timer may fire at once and read l concurrently
	l.extend(sent)
	l.mu.Unlock()
	return l, nil
}

// extend makes the lease valid until TTL after sent. The caller holds l.mu.
func (l *Lease) extend(sent time.Time) {
	l.validUntil = sent.Add(l.opts.TTL)
	if l.timer != nil {
		l.timer.Stop()
	}
	l.timer = time.AfterFunc(time.Until(l.validUntil), func() { l.valid() }) // ends it unless refreshed meanwhile
}

// end marks the lease lost. The caller holds l.mu.
func (l *Lease) end() {
	if !l.ended {
		l.ended = true
		close(l.lost)
		if l.timer != nil {
			l.timer.Stop()
		}
	}
}

// Refresh extends the lease by its TTL. It returns an error wrapping
// ErrLost when the lease expired or another holder took it; the lease
// is then ended. Status changes made by others that keep the lock (metrics,
// say) are kept.
func (l *Lease) Refresh(ctx context.Context) error {
	l.writing.Lock()
	defer l.writing.Unlock()
	return l.rewrite(ctx, func(p nameservice.Object, lk *lock) {
		lk.Refreshed = l.ns.Now().Unix()
		lk.ExpiresAt = l.ns.Now().Add(l.opts.TTL).Unix()
		p[lockKey(l.opts.Name)] = lk.object()
	}, true)
}

// Release gives the lease up, restoring the status state it had before the
// lease when Options.State was set. Use a context of its own: Release
// is often called after the work's context was canceled. It returns an error
// wrapping ErrLost when the lease was no longer ours.
func (l *Lease) Release(ctx context.Context) error {
	l.writing.Lock()
	defer l.writing.Unlock()
	defer l.finish()
	return l.rewrite(ctx, func(p nameservice.Object, lk *lock) {
		delete(p, lockKey(l.opts.Name))
		if l.opts.State != "" && lk.PrevState != "" {
			p["state"] = lk.PrevState
		}
	}, false)
}

// rewrite compare-and-sets a change of our lock into the status, retrying
// while others change the status but leave our lock in place. The caller
// holds l.writing.
func (l *Lease) rewrite(ctx context.Context, change func(nameservice.Object, *lock), extend bool) error {
	if !l.valid() {
		return l.lostErr()
	}
	cur := l.cur
	for {
		lk, ok := readLock(cur.Payload, l.opts.Name)
		if !ok || lk.Holder != l.opts.Holder || lk.Token != l.token {
			l.finish()
			return l.lostErr()
		}
		next := nameservice.Value{V: cur.V + 1, Payload: cur.Payload.Clone()}
		change(next.Payload, lk)
		sent := time.Now()
		out, err := l.ns.PushStatus(ctx, l.id, cur, next)
		if err != nil {
			return fmt.Errorf("lease %s on %s: %w", l.opts.Name, l.id, err)
		}
		if out.Applied {
			l.cur = out.Current
			if extend && !l.extendValid(sent) {
				return l.lostErr()
			}
			return nil
		}
		cur = out.Current
	}
}

// valid reports whether the lease is still valid, ending it when it has
// just expired.
func (l *Lease) valid() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.ended && !time.Now().Before(l.validUntil) {
		l.end()
	}
	return !l.ended
}

// extendValid extends the lease from sent (see extend) unless it ended
// while the refresh was on its way: an expired lease stays lost, whatever
// the refresh wrote after.
func (l *Lease) extendValid(sent time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.ended {
		l.extend(sent)
	}
	return !l.ended
}

// finish ends the lease (see end).
func (l *Lease) finish() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.end()
}

func (l *Lease) lostErr() error {
	return fmt.Errorf("lease %s on %s: %w", l.opts.Name, l.id, ErrLost)
}

// Run acquires the lease (see Acquire), runs fn with a
// context that is canceled as soon as a refresh fails or the lease is lost,
// refreshes every TTL/2 meanwhile, and releases the lease when fn returns.
// It returns fn's error, or an error wrapping ErrLost when the lease was
// lost while fn ran.
func Run(ctx context.Context, ns *nameservice.NameService, id string, opts Options, fn func(ctx context.Context, l *Lease) error) error {
	l, err := Acquire(ctx, ns, id, opts)
	if err != nil {
		return err
	}
	work, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer cancel()
		tick := time.NewTicker(opts.TTL / 2)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-l.Lost():
				return
			case <-tick.C:
				if l.Refresh(work) != nil {
					return
				}
			}
		}
	}()
	ferr := fn(work, l)
	close(done)
	lost := false
	select {
	case <-l.Lost():
		lost = true
	default:
	}
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), opts.TTL)
	defer rcancel()
	if rerr := l.Release(rctx); rerr != nil && !lost && ferr == nil {
		ferr = rerr
	}
	if lost && (ferr == nil || errors.Is(ferr, context.Canceled)) {
		return l.lostErr()
	}
	return ferr
}

// Info describes a lease found in a status, for operators.
type Info struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Holder   string `json:"holder"`
	Token    int64  `json:"token"`
	StatusV  int64  `json:"status_v"`
	TargetT  int64  `json:"target_t,omitempty"`
	Acquired int64  `json:"acquired_at"`
	Expires  int64  `json:"expires_at"`
}

func (lk *lock) info(id, name string, statusV int64) Info {
	return Info{ID: id, Name: name, Holder: lk.Holder, Token: lk.Token, StatusV: statusV, TargetT: lk.TargetT,
		Acquired: lk.AcquiredAt, Expires: lk.ExpiresAt}
}

// Held returns the leases held in the status of rec.
func Held(rec *nameservice.Record) []Info {
	var out []Info
	if rec.Status == nil {
		return nil
	}
	for k := range rec.Status.Payload {
		name, ok := strings.CutSuffix(k, "_lock")
		if !ok || name == "" {
			continue
		}
		if lk, held := readLock(rec.Status.Payload, name); held {
			out = append(out, lk.info(rec.ID.String(), name, rec.Status.V))
		}
	}
	return out
}

// Break removes lease name from the status of id, whoever holds it,
// and returns what it removed (nil when there was none). It is an operator's
// tool: the broken holder finds out at its next refresh, and anything it
// writes meanwhile must be refused by its fencing token.
func Break(ctx context.Context, ns *nameservice.NameService, id, name string) (*Info, error) {
	for {
		cur, err := ns.StatusOf(ctx, id)
		if err != nil {
			return nil, err
		}
		lk, held := readLock(cur.Payload, name)
		if !held {
			return nil, nil
		}
		next := nameservice.Value{V: cur.V + 1, Payload: cur.Payload.Clone()}
		delete(next.Payload, lockKey(name))
		if lk.PrevState != "" {
			next.Payload["state"] = lk.PrevState
		}
		out, err := ns.PushStatus(ctx, id, cur, next)
		if err != nil {
			return nil, err
		}
		if out.Applied {
			info := lk.info(id, name, cur.V)
			return &info, nil
		}
	}
}
