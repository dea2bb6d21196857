// Package driverutil holds what the drivers of this module share beyond
// the contract of package driver, and a few rules the packages around them
// share too (Positive, Send, Jitter, Sleep).
package driverutil

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/model"
)

// Diff returns the events that take record old to record new (either may
// be nil: created, deleted): one per concern whose value changed, in
// concern order, or a Deleted event, so that all watches report alike.
func Diff(old, new *model.Record) []driver.Event {
	if new == nil {
		if old == nil {
			return nil
		}
		return []driver.Event{{ID: old.ID, Deleted: true}}
	}
	var evs []driver.Event
	for _, c := range model.Concerns {
		nv := new.Value(c)
		if nv == nil {
			continue
		}
		var ov model.Value
		if old != nil && old.Value(c) != nil {
			ov = *old.Value(c)
		}
		if old == nil || !ov.Equal(*nv) {
			evs = append(evs, driver.Event{ID: new.ID, Concern: c, Old: ov.V, New: nv.Clone()})
		}
	}
	return evs
}

// Selected returns the events of Diff(old, new) that opts reports, a
// record's kind being new's, or old's when it was purged; a record purged
// and created again as the other kind is a purge of the one and a creation
// of the other.
func Selected(opts driver.WatchOptions, old, new *model.Record) []driver.Event {
	if old != nil && new != nil && old.Kind != "" && old.Kind != new.Kind {
		return append(Selected(opts, old, nil), Selected(opts, nil, new)...)
	}
	k := model.Kind("")
	if new != nil {
		k = new.Kind
	} else if old != nil {
		k = old.Kind
	}
	return slices.DeleteFunc(Diff(old, new), func(ev driver.Event) bool { return !opts.Reports(k, ev) })
}

// Changes returns the events, as Selected reports them, that take the
// records of prev to those of next, a record absent from next being purged.
func Changes(opts driver.WatchOptions, prev, next map[model.ID]*model.Record) []driver.Event {
	var evs []driver.Event
	for id, r := range next {
		evs = append(evs, Selected(opts, prev[id], r)...)
	}
	for id, r := range prev {
		if next[id] == nil {
			evs = append(evs, Selected(opts, r, nil)...)
		}
	}
	return evs
}

// PerRecord reports whether err, met while List read one record, belongs in
// Page.Failed rather than failing the page: an unreachable or throttling
// backend, or a caller that gave up, fails the page (every later record
// would fail alike).
func PerRecord(err error) bool {
	switch model.Code(err) {
	case model.Unavailable, model.Throttled, model.Canceled:
		return false
	}
	return true
}

// BranchesError is the error of a drop refused because N branches of ID
// exist; it matches model.ErrHasBranches, and a server reads N from it.
type BranchesError struct {
	ID model.ID
	N  int64
}

func (e *BranchesError) Error() string {
	return fmt.Sprintf("%v: %s has %d branch(es); drop them first", model.ErrHasBranches, e.ID, e.N)
}

// Is reports whether target is model.ErrHasBranches.
func (e *BranchesError) Is(target error) bool { return target == model.ErrHasBranches }

// Token returns 24 random hex digits, for keys and tokens no other writer
// uses.
func Token() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b) // crypto/rand does not fail on supported platforms
	return hex.EncodeToString(b)
}

// Positive returns v when it is above zero, else def: the one rule for
// options whose zero value means "the default", so that a negative
// duration or count never reaches a ticker, a timeout or a loop bound.
func Positive[T ~int | ~int64 | ~float64](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

// Send sends v on ch unless ctx ends first, and reports whether it sent:
// false tells the producer that the consumer is gone.
func Send[T any](ctx context.Context, ch chan<- T, v T) bool {
	select {
	case ch <- v:
		return true
	case <-ctx.Done():
		return false
	}
}

// Report counts c, an object a collector removed or kept, in st and hands
// it to opts.Report.
func Report(opts driver.CollectOptions, st *driver.CollectStats, c driver.Collected) {
	if c.Removed {
		st.Removed++
	} else {
		st.Kept++
	}
	if opts.Report != nil {
		opts.Report(c)
	}
}
