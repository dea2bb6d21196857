// Package mem is the in-memory reference driver: the simplest correct
// implementation of the driver contract, for tests and examples.
//
// "mem://NAME" opens the process-wide store called NAME, so two opens act
// as two clients of one store; "mem://" opens a new private store each
// time. Nothing is persisted.
//
// A call runs whole under the store's lock, so no answer is lost inside the
// driver; a resend (driver.Write.Resend, from a client of ns serve) writes
// nothing: it answers done when the store holds its write (see writes.go),
// and an error wrapping model.ErrOutcomeUnknown otherwise.
package mem

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers"
	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/model"
)

// Scheme is the URL scheme of this driver.
const Scheme = "mem"

func init() { drivers.Register(Scheme, drivers.Opens(ParseURL, Open)) }

// Config says which store Open opens.
type Config struct {
	// Name names a process-wide store: every driver opened with the same
	// Name in one process shares its records. "" opens a new private store.
	Name string
}

var (
	storesMu sync.Mutex
	stores   = map[string]*Store{}
)

// Open returns a new client of the store cfg names. It never fails; the
// error is there for the shape every driver package shares.
func Open(_ context.Context, cfg Config) (*Driver, error) {
	if cfg.Name == "" {
		return NewStore().Open(), nil
	}
	storesMu.Lock()
	defer storesMu.Unlock()
	s := stores[cfg.Name]
	if s == nil {
		s = NewStore()
		stores[cfg.Name] = s
	}
	return s.Open(), nil
}

// ParseURL returns the Config of a mem://NAME URL. It returns an error
// wrapping model.ErrInvalidArgument for a path or a query parameter.
func ParseURL(u *url.URL) (Config, error) {
	if u.Path != "" && u.Path != "/" {
		return Config{}, fmt.Errorf("mem: %w: URL takes a store name as host, not a path (mem://NAME)", model.ErrInvalidArgument)
	}
	if u.RawQuery != "" {
		return Config{}, fmt.Errorf("mem: %w: URL takes no parameters (mem://NAME)", model.ErrInvalidArgument)
	}
	return Config{Name: u.Host}, nil
}

// Store holds records in memory. Open it any number of times for
// independent clients.
type Store struct {
	mu      sync.Mutex
	recs    map[model.ID]*model.Record
	corrupt map[model.ID]bool // see Corrupt
	subs    map[*subscriber]bool
	// lives and purges record writes for resends (see writes.go): the
	// life of each record, and the write ID of the last purge of each ID.
	lives  map[model.ID]*life
	purges map[model.ID]string
	// sorted holds the IDs of recs in ID order, for List to resume a page
	// by binary search; nil after a Create or Delete, rebuilt by the next
	// List, so a listing between writes sorts once, not once per page.
	sorted []keyedID
}

type keyedID struct {
	key string // id.String()
	id  model.ID
	// rec is recs[id] (changed in place; replaced only by a Create or
	// Delete, which drop the index), so List needs no lookup in recs.
	rec *model.Record
}

// Corrupt makes record id unreadable, as a file or item that no longer
// decodes would be on a persistent backend: Get, Update and Retract fail with
// an error wrapping model.ErrInternal and List reports it in Page.Failed,
// until Delete removes it. It is for testing readers; it returns an error
// wrapping model.ErrNotFound when there is no such record.
func (s *Store) Corrupt(id model.ID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.recs[id]; !ok {
		return fmt.Errorf("mem: %w: %s", model.ErrNotFound, id)
	}
	s.corrupt[id] = true
	return nil
}

// record returns the stored record id, or an error for an absent or
// corrupt one. The caller holds s.mu.
func (s *Store) record(id model.ID) (*model.Record, error) {
	r, ok := s.recs[id]
	if !ok {
		return nil, fmt.Errorf("mem: %w: %s", model.ErrNotFound, id)
	}
	if s.corrupt[id] {
		return nil, fmt.Errorf("mem: %w: record %s is corrupt", model.ErrInternal, id)
	}
	return r, nil
}

// NewStore returns an empty store of this process alone, for tests that
// need the store itself (Corrupt) beside its clients.
func NewStore() *Store {
	return &Store{recs: map[model.ID]*model.Record{}, corrupt: map[model.ID]bool{}, subs: map[*subscriber]bool{},
		lives: map[model.ID]*life{}, purges: map[model.ID]string{}}
}

// Open returns a new client of s.
func (s *Store) Open() *Driver { return &Driver{s: s} }

// Driver is one client of a Store.
type Driver struct {
	s      *Store
	closed driverutil.ClosedFlag
}

var (
	_ driver.Driver       = (*Driver)(nil)
	_ driver.ExactWatcher = (*Driver)(nil)
)

// locked runs f under the store's lock, unless d is closed or ctx is done.
func locked[T any](ctx context.Context, d *Driver, f func(s *Store) (T, error)) (T, error) {
	if err := d.closed.Check(ctx, "mem"); err != nil {
		var zero T
		return zero, err
	}
	d.s.mu.Lock()
	defer d.s.mu.Unlock()
	return f(d.s)
}

// run is locked for a call that returns only an error.
func (d *Driver) run(ctx context.Context, f func(s *Store) error) error {
	_, err := locked(ctx, d, func(s *Store) (struct{}, error) { return struct{}{}, f(s) })
	return err
}

// Create implements driver.Driver. The record's incarnation is the
// create's write ID (driver.WriteOf).
func (d *Driver) Create(ctx context.Context, rec *model.Record) error {
	return d.run(ctx, func(s *Store) error {
		w := driver.WriteOf(ctx)
		if w.Resend {
			return resent("create", rec.ID, w, s.createdBy(rec.ID, w))
		}
		return s.insert(rec, w)
	})
}

// insert stores rec, made by the write w, unless its ID is taken. The
// caller holds s.mu.
func (s *Store) insert(rec *model.Record, w driver.Write) error {
	if _, ok := s.recs[rec.ID]; ok {
		return fmt.Errorf("mem: %w: %s", model.ErrAlreadyExists, rec.ID)
	}
	s.recs[rec.ID] = rec.Clone()
	s.sorted = nil
	s.lives[rec.ID] = &life{inc: w.ID}
	for _, c := range model.Concerns {
		if v := rec.Value(c); v != nil {
			s.notify(rec.Kind, driver.Event{ID: rec.ID, Concern: c, New: v.Clone()})
		}
	}
	return nil
}

// remove deletes record r, purged by the write w (zero: a branch drop).
// The caller holds s.mu.
func (s *Store) remove(r *model.Record, w driver.Write) {
	delete(s.recs, r.ID)
	s.sorted = nil
	delete(s.corrupt, r.ID)
	delete(s.lives, r.ID)
	if w.ID != "" {
		s.purges[r.ID] = w.ID
	}
	s.notify(r.Kind, driver.Event{ID: r.ID, Deleted: true})
}

// Get implements driver.Driver.
func (d *Driver) Get(ctx context.Context, id model.ID) (*model.Record, error) {
	return locked(ctx, d, func(s *Store) (*model.Record, error) {
		r, err := s.record(id)
		if err != nil {
			return nil, err
		}
		return r.Clone(), nil
	})
}

// Update implements driver.Driver.
func (d *Driver) Update(ctx context.Context, id model.ID, c model.Concern, cond driver.Condition, next model.Value) (driver.Outcome, error) {
	return locked(ctx, d, func(s *Store) (driver.Outcome, error) {
		w := driver.WriteOf(ctx)
		if w.Resend {
			l := s.lives[id]
			if err := resent("update", id, w, l != nil && c.Valid() && l.writes[c].Has(w.ID)); err != nil {
				return driver.Outcome{}, err
			}
			return driver.Outcome{Applied: true, Current: next.Clone()}, nil
		}
		r, err := s.record(id)
		if err != nil {
			return driver.Outcome{}, err
		}
		if r.Value(c) == nil {
			return driver.Outcome{}, fmt.Errorf("mem: %w: %s has no %s", model.ErrNotFound, id, c)
		}
		cur := *r.Value(c)
		if !cond.Holds(cur, next) {
			return driver.Outcome{Current: cur.Clone()}, nil
		}
		s.write(r, c, next, w)
		return driver.Outcome{Applied: true, Current: next.Clone()}, nil
	})
}

// Retract implements driver.Driver.
func (d *Driver) Retract(ctx context.Context, id model.ID, at time.Time) error {
	return d.run(ctx, func(s *Store) error {
		w := driver.WriteOf(ctx)
		r, err := s.record(id)
		switch {
		case w.Resend:
			// Retracted is done, whoever retracted it.
			return resent("retract", id, w, err == nil && r.Retracted)
		case err != nil:
			return err
		case r.Retracted:
			return nil
		}
		r.Retracted = true
		s.write(r, model.Status, model.Value{V: r.Status.V + 1, Payload: model.RetractedStatus(at)}, w)
		return nil
	})
}

// Delete implements driver.Driver.
func (d *Driver) Delete(ctx context.Context, id model.ID) error {
	return d.run(ctx, func(s *Store) error {
		w := driver.WriteOf(ctx)
		if w.Resend {
			return resent("delete", id, w, s.purges[id] == w.ID)
		}
		r, ok := s.recs[id]
		if !ok {
			return fmt.Errorf("mem: %w: %s", model.ErrNotFound, id)
		}
		s.remove(r, w)
		return nil
	})
}

// DefaultPageSize is the page size of List when none is asked for.
const DefaultPageSize = 100

// List implements driver.Driver. The page token is the last ID of the
// previous page, so pages stay correct while records are added or removed.
func (d *Driver) List(ctx context.Context, opts driver.ListOptions) (*driver.Page, error) {
	after, size, err := driverutil.PageStart(opts, DefaultPageSize)
	if err != nil {
		return nil, err
	}
	return locked(ctx, d, func(s *Store) (*driver.Page, error) {
		if s.sorted == nil {
			s.sorted = make([]keyedID, 0, len(s.recs))
			for id, r := range s.recs {
				s.sorted = append(s.sorted, keyedID{id.String(), id, r})
			}
			slices.SortFunc(s.sorted, func(a, b keyedID) int { return strings.Compare(a.key, b.key) })
		}
		ids := s.sorted
		from := max(after, opts.Prefix)
		i, _ := slices.BinarySearchFunc(ids, from, func(k keyedID, from string) int { return strings.Compare(k.key, from) })
		page := &driver.Page{}
		last := ""
		for ; i < len(ids) && strings.HasPrefix(ids[i].key, opts.Prefix); i++ {
			k := ids[i]
			corrupt := len(s.corrupt) > 0 && s.corrupt[k.id]
			if k.key <= after || !(corrupt || opts.Matches(k.rec)) {
				continue
			}
			if len(page.Records)+len(page.Failed) == size {
				page.NextPageToken = driverutil.EncodePageToken(last)
				break
			}
			if corrupt {
				_, err := s.record(k.id)
				page.Failed = append(page.Failed, &model.RecordError{ID: k.id, Object: "mem record " + k.key, Err: err})
			} else {
				page.Records = append(page.Records, k.rec.Clone())
			}
			last = k.key
		}
		return page, nil
	})
}

// Close implements driver.Driver.
func (d *Driver) Close() error {
	d.closed.Close()
	return nil
}

// Collect implements driver.Collector: a purge removes the record whole,
// so there is never anything to collect.
func (d *Driver) Collect(ctx context.Context, _ driver.CollectOptions) (driver.CollectStats, error) {
	return driver.CollectStats{}, d.run(ctx, func(*Store) error { return nil })
}

var _ driver.Collector = (*Driver)(nil)
