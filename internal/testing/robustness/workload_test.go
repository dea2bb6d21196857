package robustness

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/model"
)

// Opener opens a new, independent client of one store, as a separate
// process would.
type Opener func(ctx context.Context) (driver.Driver, error)

// Workload says what the clients do.
type Workload struct {
	Clients int           // independent clients, each its own driver instance
	Ops     int           // operations per client
	IDs     []string      // ledgers created (and recorded) before the clients start
	Fresh   []string      // IDs the clients create by a bootstrapping CompareAndSetRef
	Seed    uint64        // seeds every client's choices
	Timeout time.Duration // bounds the whole run; operations still running then fail
	// Started, when set, is called once the IDs exist and just before the
	// clients start (to turn faults on).
	Started func()
	// Duration, when positive, keeps each client going after its Ops
	// operations until it has passed since they started: a run lasts at
	// least that long, and holds at least Ops operations per client
	// however slow the machine.
	Duration time.Duration
	// Chaos, when set, is one more client, numbered Clients, that purges
	// and creates the IDs again while another client's answer is lost
	// (see Chaos).
	Chaos *Chaos
}

// Run opens w.Clients clients with open, creates w.IDs, runs the clients
// and returns their history. The clients are closed when it returns.
func Run(ctx context.Context, open Opener, w Workload) (*History, error) {
	ctx, cancel := context.WithTimeout(ctx, w.Timeout)
	defer cancel()
	clients, err := openClients(ctx, open, w)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, c := range clients {
			_ = c.ns.Close()
		}
	}()
	h := NewHistory()
	for _, id := range w.IDs {
		clients[0].init(ctx, h, id)
	}
	if w.Chaos != nil {
		stop, err := w.Chaos.start(ctx, h, w)
		if err != nil {
			return nil, err
		}
		defer stop()
	}
	if w.Started != nil {
		w.Started()
	}
	var end time.Time
	if w.Duration > 0 {
		end = time.Now().Add(w.Duration)
	}
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil && (i < w.Ops || time.Now().Before(end)); i++ {
				c.one(ctx, h)
			}
		})
	}
	wg.Wait()
	return h, nil
}

func openClients(ctx context.Context, open Opener, w Workload) ([]*client, error) {
	var clients []*client
	for i := range w.Clients {
		c, err := newClient(ctx, open, w, i)
		if err != nil {
			for _, c := range clients {
				_ = c.ns.Close()
			}
			return nil, err
		}
		clients = append(clients, c)
	}
	return clients, nil
}

// newClient opens client n of w with open.
func newClient(ctx context.Context, open Opener, w Workload, n int) (*client, error) {
	d, err := open(ctx)
	if err != nil {
		return nil, fmt.Errorf("open client %d: %w", n, err)
	}
	return &client{
		n:    n,
		ns:   nameservice.New(d),
		rnd:  rand.New(rand.NewPCG(w.Seed, uint64(n))),
		ids:  w.all(),
		seen: map[string]*model.Record{},
	}, nil
}

// all returns every ID of w: those created first, then the fresh ones.
func (w Workload) all() []string { return append(append([]string(nil), w.IDs...), w.Fresh...) }

// client is one independent client and what it has seen.
type client struct {
	n    int
	ns   *nameservice.NameService
	rnd  *rand.Rand
	ids  []string
	seen map[string]*model.Record // the last record seen per ID; absent: none seen
	seq  int
}

// weights of the operations a client picks; a bootstrap is picked only for
// an ID the client has not seen.
var weights = []struct {
	kind Kind
	w    int
}{
	{Lookup, 20}, {PublishCommit, 12}, {PublishIndex, 10}, {AdminIndex, 5}, {CASRef, 18},
	{PushStatus, 15}, {PushConfig, 15}, {Create, 6}, {Purge, 2},
}

func (c *client) pick() Kind {
	total := 0
	for _, w := range weights {
		total += w.w
	}
	x := c.rnd.IntN(total)
	for _, w := range weights {
		if x < w.w {
			return w.kind
		}
		x -= w.w
	}
	return Lookup
}

// one runs one random operation on a random ID.
func (c *client) one(ctx context.Context, h *History) {
	c.act(ctx, h, c.ids[c.rnd.IntN(len(c.ids))], c.pick())
}

// act runs one operation of kind k on id.
func (c *client) act(ctx context.Context, h *History, id string, k Kind) {
	c.seq++
	switch k {
	case Lookup:
		c.lookup(ctx, h, id)
	case PublishCommit:
		c.publish(ctx, h, id, PublishCommit, model.Head, c.rnd.Int64N(4)-1)
	case PublishIndex:
		c.publish(ctx, h, id, PublishIndex, model.Index, c.rnd.Int64N(4)-1)
	case AdminIndex:
		c.publish(ctx, h, id, AdminIndex, model.Index, c.rnd.Int64N(2))
	case CASRef:
		c.casRef(ctx, h, id)
	case PushStatus:
		c.push(ctx, h, id, PushStatus, model.Status)
	case PushConfig:
		c.push(ctx, h, id, PushConfig, model.Config)
	case Create:
		if c.rnd.IntN(3) == 0 {
			c.init(ctx, h, id)
		} else {
			c.bootstrap(ctx, h, id)
		}
	case Purge:
		c.purge(ctx, h, id)
	}
}

// purge purges id.
func (c *client) purge(ctx context.Context, h *History, id string) {
	out := h.Do(c.n, Input{Kind: Purge, ID: id}, func() Output {
		if err := c.ns.Purge(ctx, id); err != nil {
			return failed(err)
		}
		return Output{Applied: true}
	})
	if !out.Unknown {
		delete(c.seen, id)
	}
}

// last returns the value of concern k the client saw last on id (the value
// of a new ledger when it saw none).
func (c *client) last(id string, k model.Concern) model.Value {
	if rec := c.seen[id]; rec != nil && rec.Value(k) != nil {
		return rec.Value(k).Clone()
	}
	return initial(k)
}

// expected returns the value a compare-and-set expects: mostly the last
// one seen, sometimes a stale or made-up one.
func (c *client) expected(id string, k model.Concern) model.Value {
	v := c.last(id, k)
	switch c.rnd.IntN(10) {
	case 0:
		return initial(k)
	case 1:
		if v.Payload != nil {
			v.Payload["made_up"] = true
		}
	}
	return v
}

// note records what an output shows of concern k of id.
func (c *client) note(id string, k model.Concern, out Output) {
	if out.NotFound {
		delete(c.seen, id)
		return
	}
	if out.Unknown {
		return
	}
	rec := c.seen[id]
	if rec == nil {
		rec = model.NewLedger(model.ID{}, 0)
		c.seen[id] = rec
	}
	rec.SetValue(k, out.Current.Clone())
}

// address returns an address no other operation uses.
func (c *client) address() string { return fmt.Sprintf("c%d-%d", c.n, c.seq) }

func (c *client) init(ctx context.Context, h *History, id string) {
	in := Input{Kind: Create, ID: id}
	h.Do(c.n, in, func() Output {
		err := c.ns.Init(ctx, id)
		switch model.Code(err) {
		case model.Unknown:
			if err == nil {
				return Output{Applied: true}
			}
		case model.AlreadyExists:
			return Output{}
		}
		return failed(err)
	})
}

func (c *client) lookup(ctx context.Context, h *History, id string) {
	out := h.Do(c.n, Input{Kind: Lookup, ID: id}, func() Output {
		rec, err := c.ns.Lookup(ctx, id)
		if err != nil {
			return failed(err)
		}
		return Output{Record: rec}
	})
	switch {
	case out.NotFound:
		delete(c.seen, id)
	case out.Record != nil:
		c.seen[id] = out.Record.Clone()
	}
}

func (c *client) publish(ctx context.Context, h *History, id string, kind Kind, k model.Concern, delta int64) {
	t := max(1, c.last(id, k).V+delta)
	in := Input{Kind: kind, ID: id, Concern: k, Next: model.RefValue(c.address(), t)}
	f := map[Kind]func(context.Context, string, int64, string) (driver.Outcome, error){
		PublishCommit: c.ns.PublishCommit, PublishIndex: c.ns.PublishIndex, AdminIndex: c.ns.AdminPublishIndex,
	}[kind]
	out := h.Do(c.n, in, func() Output { return outcome(f(ctx, id, t, in.Next.Payload.String("address"))) })
	c.note(id, k, out)
}

func (c *client) casRef(ctx context.Context, h *History, id string) {
	k := model.Head
	if c.rnd.IntN(2) == 0 {
		k = model.Index
	}
	exp := c.expected(id, k)
	t := exp.V + c.rnd.Int64N(2)
	if k == model.Head {
		t++
	}
	in := Input{Kind: CASRef, ID: id, Concern: k, Expected: &exp, Next: model.RefValue(c.address(), max(1, t))}
	out := h.Do(c.n, in, func() Output {
		return outcome(c.ns.CompareAndSetRef(ctx, id, k, &exp, model.Ref{Address: c.address(), T: in.Next.V}))
	})
	c.note(id, k, out)
}

func (c *client) push(ctx context.Context, h *History, id string, kind Kind, k model.Concern) {
	exp := c.expected(id, k)
	next := model.Value{V: exp.V + 1, Payload: model.Object{"op": c.address()}}
	if k == model.Status {
		next.Payload["state"] = []string{"ready", "busy"}[c.rnd.IntN(2)]
	}
	in := Input{Kind: kind, ID: id, Concern: k, Expected: &exp, Next: next}
	f := c.ns.PushConfig
	if kind == PushStatus {
		f = c.ns.PushStatus
	}
	out := h.Do(c.n, in, func() Output { return outcome(f(ctx, id, exp, next.Clone())) })
	c.note(id, k, out)
}

// bootstrap creates id with a head or index already set, by
// CompareAndSetRef with a nil expected value.
func (c *client) bootstrap(ctx context.Context, h *History, id string) {
	k := model.Head
	if c.rnd.IntN(2) == 0 {
		k = model.Index
	}
	ref := model.Ref{Address: c.address(), T: 1 + c.rnd.Int64N(3)}
	in := Input{Kind: Create, ID: id, Concern: k, Next: model.RefValue(ref.Address, ref.T)}
	out := h.Do(c.n, in, func() Output { return outcome(c.ns.CompareAndSetRef(ctx, id, k, nil, ref)) })
	c.note(id, k, out)
}
