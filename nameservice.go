package nameservice

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers"
	"nameservice.dev/nameservice/guard"
	"nameservice.dev/nameservice/internal/telemetry"
	"nameservice.dev/nameservice/model"
)

// NameService is the portable API over one driver, and the one layer
// between every caller and that driver (layer.go): each call is checked
// against the rules of package guard, traced, made, and its error marked,
// in one place. It is safe for concurrent use; open one per process and
// share it. It hands out no handle to its driver: the driver's optional
// capabilities are its methods (Provision, Probe, ChangedAt, ...), and As
// reaches what one backend alone offers.
type NameService struct {
	d          driver.Driver
	in         *telemetry.Instruments // nil: nothing reported
	now        func() time.Time
	maxRetries int
	tel        telemetry.Config
}

// Option configures a NameService.
type Option func(*NameService)

// WithClock sets the clock used for created_at and retracted_at.
func WithClock(now func() time.Time) Option { return func(ns *NameService) { ns.now = now } }

// WithRetryLimit bounds the read-and-retry loops of FastForwardCommit and
// PublishGraphSource (default 8).
func WithRetryLimit(n int) Option { return func(ns *NameService) { ns.maxRetries = max(1, n) } }

// New returns a NameService over d (instrumented when a telemetry option
// is given).
func New(d driver.Driver, opts ...Option) *NameService {
	ns := &NameService{d: d, now: time.Now, maxRetries: 8}
	for _, o := range opts {
		o(ns)
	}
	ns.in = telemetry.New(d, ns.tel)
	return ns
}

// Open opens the driver registered for rawURL's scheme (see package drivers)
// and returns a NameService over it.
func Open(ctx context.Context, rawURL string, opts ...Option) (*NameService, error) {
	d, err := drivers.Open(ctx, rawURL)
	if err != nil {
		return nil, err
	}
	backend, namespace := telemetry.FromURL(rawURL)
	return New(d, append([]Option{withBackend(backend, namespace)}, opts...)...), nil
}

// Now returns the time on the clock set by WithClock, for recipes built on
// this package (leases stamp their lock with it).
func (ns *NameService) Now() time.Time { return ns.now() }

func parse(op, id string) (model.ID, error) {
	pid, err := model.ParseID(id)
	if err != nil {
		return pid, &model.Error{Code: model.InvalidArgument, Op: op, Err: err}
	}
	return pid, nil
}

// wrap returns err as the *Error of operation op on record id; nil stays
// nil.
func wrap(op string, id model.ID, err error) error {
	if err == nil {
		return nil
	}
	return &model.Error{Code: model.Code(err), Op: op, ID: id, Err: err}
}

// parseNew parses the ID of a record to create: one guard.CheckNewID
// accepts.
func parseNew(op, id string) (model.ID, error) {
	pid, err := parse(op, id)
	if err == nil {
		if err = guard.CheckNewID(pid); err != nil {
			err = &model.Error{Code: model.InvalidArgument, Op: op, Err: err}
		}
	}
	return pid, err
}

// byID runs f on id parsed for operation op, its error made the *Error of
// op on that ID.
func byID[T any](op, id string, f func(model.ID) (T, error)) (T, error) {
	pid, err := parse(op, id)
	if err != nil {
		var zero T
		return zero, err
	}
	v, err := f(pid)
	return v, wrap(op, pid, err)
}

// onID is byID for an operation that returns only an error.
func onID(op, id string, f func(model.ID) error) error {
	_, err := byID(op, id, func(pid model.ID) (struct{}, error) { return struct{}{}, f(pid) })
	return err
}

func invalid(op string, id model.ID, format string, args ...any) error {
	return wrap(op, id, fmt.Errorf("%w: %s", model.ErrInvalidArgument, fmt.Sprintf(format, args...)))
}

// Init creates ledger id with every concern at once: head, index and config
// unborn, status v1 {state: ready}. It returns an error wrapping
// ErrAlreadyExists when the ID is taken, even by a retracted record (Purge
// frees it), and ErrInvalidID for a malformed ID or one no new record may
// take (guard.CheckNewID: an '@', which Fluree reads as time travel).
func (ns *NameService) Init(ctx context.Context, id string) error {
	pid, err := parseNew("init", id)
	if err != nil {
		return err
	}
	return wrap("init", pid, ns.Create(ctx, model.NewLedger(pid, ns.now().Unix())))
}

// PublishGraphSource creates graph source id of sourceType (e.g.
// "db:Bm25Index") depending on the ledgers deps, with config (any JSON
// object, or nil for none) at config_v 1. When the graph source exists it
// pushes config as config_v+1 (leaving its index alone), unless config is nil
// or equal to the current one. It returns an error wrapping ErrWrongKind when
// id is a ledger, and ErrInvalidArgument for an empty sourceType, a malformed
// dependency or a config that is not a JSON object or breaks a limit of
// docs/model.md, and ErrAlreadyExists when id is a graph source of another
// type.
func (ns *NameService) PublishGraphSource(ctx context.Context, id, sourceType string, deps []string, config any) error {
	const op = "publish graph source"
	pid, err := parseNew(op, id)
	if err != nil {
		return err
	}
	if sourceType == "" {
		return invalid(op, pid, "empty source type")
	}
	if len(deps) > guard.MaxDependencies {
		return invalid(op, pid, "%d dependencies, over the limit of %d", len(deps), guard.MaxDependencies)
	}
	normDeps := slices.Clone(deps) // nil (absent) stays apart from empty
	for i, d := range deps {
		did, err := model.ParseID(d)
		if err != nil {
			return fmt.Errorf("%s %s: dependency: %w", op, pid, err)
		}
		normDeps[i] = did.String()
	}
	cfg, err := normalize("config", config)
	if err != nil {
		return fmt.Errorf("%s %s: %w", op, pid, err)
	}
	rec := model.NewGraphSource(pid, sourceType, normDeps, cfg, ns.now().Unix())
	err = ns.Create(ctx, rec)
	if !errors.Is(err, model.ErrAlreadyExists) {
		return wrap(op, pid, err)
	}
	return wrap(op, pid, ns.updateGraphSourceConfig(ctx, pid, sourceType, cfg))
}

// updateGraphSourceConfig pushes cfg to the existing graph source id. A
// graph source's type is fixed at creation: publishing it again with another
// type is refused with ErrAlreadyExists (the ID is taken by a graph source of
// that other type) rather than ignored.
func (ns *NameService) updateGraphSourceConfig(ctx context.Context, id model.ID, sourceType string, cfg model.Object) error {
	cur, err := ns.Get(ctx, id)
	if err != nil {
		return err
	}
	if cur.Kind != model.GraphSource {
		return fmt.Errorf("%w: %s is a %s, not a graph source", model.ErrWrongKind, id, cur.Kind)
	}
	if cur.SourceType != sourceType {
		return fmt.Errorf("%w: %s is a graph source of type %q, not %q; a type cannot change (purge it and publish it again)",
			model.ErrAlreadyExists, id, cur.SourceType, sourceType)
	}
	if cfg == nil {
		return nil
	}
	c := *cur.Config
	for range ns.maxRetries {
		if c.Payload.Equal(cfg) {
			return nil
		}
		out, err := ns.Update(ctx, id, model.Config, driver.IfEquals(c), model.Value{V: c.V + 1, Payload: cfg})
		if err != nil || out.Applied {
			return err
		}
		c = out.Current
	}
	return fmt.Errorf("%w: config of %s kept changing under %d attempts", model.ErrUnavailable, id, ns.maxRetries)
}

// PublishCommit moves the head of ledger id to address at t when t is above
// the current commit_t. A stale publish is not applied and is not an error:
// the Outcome carries the current head. It returns an error wrapping
// ErrNotFound for an unknown ID (nothing is created), ErrWrongKind for a graph
// source, and ErrInvalidArgument when t < 1 or address is empty, or breaks a
// rule of package guard (longer than guard.MaxAddressBytes, not valid UTF-8,
// a content ID Fluree cannot read).
func (ns *NameService) PublishCommit(ctx context.Context, id string, t int64, address string) (Outcome, error) {
	return ns.publishRef(ctx, "publish commit", id, model.Head, driver.IfAbove(), model.RefValue(address, t))
}

// PublishIndex moves the index of id to address at t when t is above the
// current index_t; otherwise as PublishCommit.
func (ns *NameService) PublishIndex(ctx context.Context, id string, t int64, address string) (Outcome, error) {
	return ns.publishRef(ctx, "publish index", id, model.Index, driver.IfAbove(), model.RefValue(address, t))
}

// AdminPublishIndex is PublishIndex that also applies at t equal to the
// current index_t, to replace an index rebuilt at the same t.
func (ns *NameService) AdminPublishIndex(ctx context.Context, id string, t int64, address string) (Outcome, error) {
	return ns.publishRef(ctx, "admin publish index", id, model.Index, driver.IfAtLeast(), model.RefValue(address, t))
}

// PublishIndexGraphs publishes the index of a ledger with named graphs: every
// graph's {address, t, rev}, or nil for a graph not indexed yet. The index's
// own address and t (index_t, what readers that know one pointer see) are
// those of graphs[DefaultGraph], which must be indexed. Like PublishIndex it
// applies only when that t is above the current index_t.
func (ns *NameService) PublishIndexGraphs(ctx context.Context, id string, graphs map[string]*GraphIndex) (Outcome, error) {
	return ns.publishRef(ctx, "publish index", id, model.Index, driver.IfAbove(), model.GraphsValue(graphs))
}

// AdminPublishIndexGraphs is PublishIndexGraphs that also applies at t equal
// to the current index_t.
func (ns *NameService) AdminPublishIndexGraphs(ctx context.Context, id string, graphs map[string]*GraphIndex) (Outcome, error) {
	return ns.publishRef(ctx, "admin publish index", id, model.Index, driver.IfAtLeast(), model.GraphsValue(graphs))
}

func (ns *NameService) publishRef(ctx context.Context, op, id string, c model.Concern, cond driver.Condition, next Value) (Outcome, error) {
	return byID(op, id, func(pid model.ID) (Outcome, error) {
		if err := checkRef(next); err != nil {
			return Outcome{}, err
		}
		out, err := ns.Update(ctx, pid, c, cond, next)
		return out, ns.classifyMissing(ctx, pid, c, err)
	})
}

// checkRef refuses a head or index without a t from 1 or an address, in
// the API's words; the layer checks every other rule where the value is
// written.
func checkRef(v model.Value) error {
	if v.V < 1 {
		return fmt.Errorf("%w: t %d: t starts at 1", model.ErrInvalidArgument, v.V)
	}
	if v.Payload.String("address") == "" {
		return fmt.Errorf("%w: empty address", model.ErrInvalidArgument)
	}
	return nil
}

// classifyMissing turns a driver's NotFound on a head into ErrWrongKind when
// the record exists and is a graph source. Drivers may not be able to tell
// the two apart in one request; this costs a read only on that error path.
func (ns *NameService) classifyMissing(ctx context.Context, id model.ID, c model.Concern, err error) error {
	if c != model.Head || !errors.Is(err, model.ErrNotFound) {
		return err
	}
	rec, gerr := ns.Get(ctx, id)
	if gerr == nil && rec.Kind != model.Ledger {
		return fmt.Errorf("%w: %s is a %s and has no head", model.ErrWrongKind, id, rec.Kind)
	}
	return err
}

// CompareAndSetRef sets the head or index (c) of id to next when the current
// value equals *expected, watermark and payload. A head needs next.T above
// expected's t, an index next.T at least expected's t; a push that breaks
// that rule, or whose expected value is not the current one, is not applied
// and its Outcome carries the current value. A nil expected means "no record":
// on an unknown ID it creates a ledger (as Init) with c already set to next,
// and on an existing one it is not applied. It returns an error wrapping
// ErrWrongKind for a head on a graph source, and ErrInvalidArgument when c is
// status or config or next is malformed.
func (ns *NameService) CompareAndSetRef(ctx context.Context, id string, c Concern, expected *Value, next Ref) (Outcome, error) {
	const op = "compare and set ref"
	pid, err := parse(op, id)
	if err != nil {
		return Outcome{}, err
	}
	if c != model.Head && c != model.Index {
		return Outcome{}, invalid(op, pid, "%s is not a ref (want head or index)", c)
	}
	nv := next.Value()
	if err := checkRef(nv); err != nil {
		return Outcome{}, wrap(op, pid, err)
	}
	if expected == nil {
		if err := guard.CheckNewID(pid); err != nil {
			return Outcome{}, wrap(op, pid, err)
		}
		return ns.bootstrapRef(ctx, pid, c, nv)
	}
	if nv.V < expected.V || (c == model.Head && nv.V == expected.V) {
		// Not applied without a write, so the layer does not see next:
		// a malformed one is refused here, not answered as stale.
		if err := guard.CheckValue(c, nv); err != nil {
			return Outcome{}, wrap(op, pid, err)
		}
		cur, err := ns.value(ctx, pid, c)
		return Outcome{Current: cur}, wrap(op, pid, err)
	}
	out, err := ns.Update(ctx, pid, c, driver.IfEquals(*expected), nv)
	return out, wrap(op, pid, ns.classifyMissing(ctx, pid, c, err))
}

func (ns *NameService) bootstrapRef(ctx context.Context, id model.ID, c model.Concern, next model.Value) (Outcome, error) {
	const op = "compare and set ref"
	rec := model.NewLedger(id, ns.now().Unix())
	rec.SetValue(c, next)
	// A record found taken may be purged before it is read: then the ID is
	// free again and the create is tried again, a bounded number of times.
	for range ns.maxRetries {
		err := ns.Create(ctx, rec)
		if err == nil {
			return Outcome{Applied: true, Current: next}, nil
		}
		if !errors.Is(err, model.ErrAlreadyExists) {
			return Outcome{}, wrap(op, id, err)
		}
		cur, err := ns.value(ctx, id, c)
		if !errors.Is(err, model.ErrNotFound) {
			return Outcome{Current: cur}, wrap(op, id, err)
		}
	}
	return Outcome{}, fmt.Errorf("%s %s: %w: the ID was created and purged again under %d attempts", op, id, model.ErrUnavailable, ns.maxRetries)
}

// FastForwardCommit moves the head of id to address at t by compare-and-set,
// re-reading and retrying (up to the retry limit) while other writers move
// the head to values still below t. It is not applied when the head reaches
// t or beyond (the history diverged or was already there); the Outcome
// carries the head it saw last.
func (ns *NameService) FastForwardCommit(ctx context.Context, id string, t int64, address string) (Outcome, error) {
	cur, err := ns.Head(ctx, id)
	if err != nil {
		return Outcome{}, err
	}
	next := model.Ref{Address: address, T: t}
	for range ns.maxRetries {
		if t <= cur.V {
			return Outcome{Current: cur}, nil
		}
		out, err := ns.CompareAndSetRef(ctx, id, model.Head, &cur, next)
		if err != nil || out.Applied {
			return out, err
		}
		cur = out.Current
	}
	return Outcome{Current: cur}, nil
}

// PushStatus sets the status of id to next when the current status equals
// expected, watermark and whole payload. It returns an error wrapping
// ErrInvalidArgument when next.V is not above expected.V or next has no
// state, and ErrNotFound for an unknown ID.
func (ns *NameService) PushStatus(ctx context.Context, id string, expected, next Value) (Outcome, error) {
	return ns.push(ctx, "push status", id, model.Status, expected, next)
}

// PushConfig sets the config of id to next (a JSON object) when the current
// config equals expected; otherwise as PushStatus.
func (ns *NameService) PushConfig(ctx context.Context, id string, expected, next Value) (Outcome, error) {
	return ns.push(ctx, "push config", id, model.Config, expected, next)
}

func (ns *NameService) push(ctx context.Context, op, id string, c model.Concern, expected, next Value) (Outcome, error) {
	return byID(op, id, func(pid model.ID) (Outcome, error) {
		if next.Payload == nil {
			return Outcome{}, fmt.Errorf("%w: a %s push needs a payload", model.ErrInvalidArgument, c)
		}
		p, err := normalize(c.String()+" payload", next.Payload)
		if err != nil {
			return Outcome{}, err
		}
		next.Payload = p
		return ns.Update(ctx, pid, c, driver.IfEquals(expected), next)
	})
}

// normalize returns v as a JSON-normal Object, naming field in its error.
// The guard checks the limits where the Object is written; a map that does
// not even normalize (nested far too deep) is refused for the limit it
// breaks when it breaks one.
func normalize(field string, v any) (model.Object, error) {
	o, err := model.NormalizeObject(v)
	if err == nil {
		return o, nil
	}
	if m, ok := v.(map[string]any); ok {
		v = model.Object(m)
	}
	if o, ok := v.(model.Object); ok {
		if limit := guard.CheckPayload(field, o); limit != nil {
			return nil, limit
		}
	}
	return nil, fmt.Errorf("%s: %w", field, err)
}

// Retract marks id retracted and pushes its status to {state: retracted,
// retracted_at} at status_v+1, in one atomic step. Retracting twice is a
// no-op. It returns an error wrapping ErrNotFound for an unknown ID.
func (ns *NameService) Retract(ctx context.Context, id string) error {
	return onID("retract", id, func(pid model.ID) error { return ns.RetractAt(ctx, pid, ns.now()) })
}

// Purge removes id entirely, so the name can be initialised again. It
// returns an error wrapping ErrNotFound for an unknown ID.
func (ns *NameService) Purge(ctx context.Context, id string) error {
	return onID("purge", id, func(pid model.ID) error { return ns.Delete(ctx, pid) })
}

// Lookup returns the whole record of id, read strongly consistently,
// retracted or not. It returns an error wrapping ErrNotFound for an unknown
// ID.
func (ns *NameService) Lookup(ctx context.Context, id string) (*Record, error) {
	return byID("lookup", id, func(pid model.ID) (*Record, error) { return ns.Get(ctx, pid) })
}

// Head returns the head of ledger id; ErrWrongKind for a graph source.
func (ns *NameService) Head(ctx context.Context, id string) (Value, error) {
	return ns.concern(ctx, id, model.Head)
}

// IndexOf returns the index of id.
func (ns *NameService) IndexOf(ctx context.Context, id string) (Value, error) {
	return ns.concern(ctx, id, model.Index)
}

// StatusOf returns the status of id.
func (ns *NameService) StatusOf(ctx context.Context, id string) (Value, error) {
	return ns.concern(ctx, id, model.Status)
}

// ConfigOf returns the config of id.
func (ns *NameService) ConfigOf(ctx context.Context, id string) (Value, error) {
	return ns.concern(ctx, id, model.Config)
}

func (ns *NameService) concern(ctx context.Context, id string, c model.Concern) (Value, error) {
	return byID("get "+c.String(), id, func(pid model.ID) (Value, error) { return ns.value(ctx, pid, c) })
}

func (ns *NameService) value(ctx context.Context, id model.ID, c model.Concern) (Value, error) {
	rec, err := ns.Get(ctx, id)
	if err != nil {
		return Value{}, err
	}
	v := rec.Value(c)
	if v == nil {
		return Value{}, fmt.Errorf("%w: %s is a %s and has no %s", model.ErrWrongKind, id, rec.Kind, c)
	}
	return *v, nil
}

// Import creates rec exactly as given (every watermark, payload and meta
// field, retracted or not) in one atomic step, as Init does for a new ledger.
// It is how records are copied between nameservices. It returns an error
// wrapping ErrAlreadyExists when the ID is taken, and ErrInvalidArgument (or
// ErrInvalidID) when rec breaks a rule of guard.CheckRecord.
func (ns *NameService) Import(ctx context.Context, rec *Record) error {
	if rec == nil {
		return fmt.Errorf("import: %w: nil record", model.ErrInvalidArgument)
	}
	return wrap("import", rec.ID, ns.Create(ctx, rec.Clone()))
}
