// Package driverutil holds what the drivers of this module share beyond
// the contract of package driver: filtering a listing, telling a failure of
// one record from one of the whole page, the events between two reads of a
// record, the error of a drop refused for branches, and the write IDs by
// which a driver recognises its writes after a lost answer.
package driverutil

import (
	"fmt"

	"nameservice.dev/nameservice/driver"
)

// Matches reports whether r passes the kind and retracted filters of opts
// (not the prefix or the page token).
func Matches(r *driver.Record, opts driver.ListOptions) bool {
	return (opts.Kind == "" || r.Kind == opts.Kind) && (opts.IncludeRetracted || !r.Retracted)
}

// Diff returns the events that take record old to record new (either may be
// nil: created, deleted): one per concern whose value changed, in concern
// order, or a Deleted event. Drivers that watch by re-reading records, and
// the portable polling watch, use it so that all report changes alike.
func Diff(old, new *driver.Record) []driver.Event {
	if new == nil {
		if old == nil {
			return nil
		}
		return []driver.Event{{ID: old.ID, Deleted: true}}
	}
	var evs []driver.Event
	for _, c := range driver.Concerns {
		nv := new.Value(c)
		if nv == nil {
			continue
		}
		var ov driver.Value
		if old != nil && old.Value(c) != nil {
			ov = *old.Value(c)
		}
		if old == nil || !ov.Equal(*nv) {
			evs = append(evs, driver.Event{ID: new.ID, Concern: c, Old: ov.V, New: nv.Clone()})
		}
	}
	return evs
}

// PerRecord reports whether err, met while List read one record, belongs in
// Page.Failed (what is stored for that record is at fault) rather than
// failing the whole page: an unreachable or throttling backend, or a caller
// that gave up, fails the page, since every later record would fail alike.
func PerRecord(err error) bool {
	switch driver.Code(err) {
	case driver.Unavailable, driver.Throttled, driver.Canceled:
		return false
	}
	return true
}

// BranchesError is the error of a drop refused because N branches of ID
// exist. It matches driver.ErrHasBranches; a server reads the count from it
// to tell its client, without the rest of a backend's message.
type BranchesError struct {
	ID driver.ID
	N  int64
}

func (e *BranchesError) Error() string {
	return fmt.Sprintf("%v: %s has %d branch(es); drop them first", driver.ErrHasBranches, e.ID, e.N)
}

// Is reports whether target is driver.ErrHasBranches.
func (e *BranchesError) Is(target error) bool { return target == driver.ErrHasBranches }

// HasBranchesError returns the error of a drop refused because n branches
// of id exist.
func HasBranchesError(id driver.ID, n int64) error { return &BranchesError{ID: id, N: n} }
