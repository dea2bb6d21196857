// Package driverutil holds what the drivers of this module share beyond
// the contract of package driver: telling a failure of
// one record from one of the whole page, the events between two reads of a
// record, the error of a drop refused for branches, the write IDs by
// which a driver recognises its writes after a lost answer, the
// closed-driver check, and the page token of the drivers that resume after
// an ID. The packages around the drivers share three rules from here too:
// options whose zero value means the default (Positive), how a watch feed
// sends (Send), and how a retry loop waits (Jitter, Sleep).
package driverutil

import (
	"fmt"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/model"
)

// Diff returns the events that take record old to record new (either may be
// nil: created, deleted): one per concern whose value changed, in concern
// order, or a Deleted event. Drivers that watch by re-reading records, and
// the portable polling watch, use it so that all report changes alike.
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

// Selected returns the events of Diff(old, new) that opts reports
// (WatchOptions.Reports), a record's kind being new's, or old's when it
// was purged; a record purged and created again as the other kind is a
// purge of the one and a creation of the other.
func Selected(opts driver.WatchOptions, old, new *model.Record) []driver.Event {
	if old != nil && new != nil && old.Kind != "" && old.Kind != new.Kind {
		// Purged and created again as the other kind.
		return append(Selected(opts, old, nil), Selected(opts, nil, new)...)
	}
	evs := Diff(old, new)
	k := kindOf(old, new)
	out := evs[:0]
	for _, ev := range evs {
		if opts.Reports(k, ev) {
			out = append(out, ev)
		}
	}
	return out
}

func kindOf(old, new *model.Record) model.Kind {
	if new != nil {
		return new.Kind
	}
	if old != nil {
		return old.Kind
	}
	return ""
}

// PerRecord reports whether err, met while List read one record, belongs in
// Page.Failed (what is stored for that record is at fault) rather than
// failing the whole page: an unreachable or throttling backend, or a caller
// that gave up, fails the page, since every later record would fail alike.
func PerRecord(err error) bool {
	switch model.Code(err) {
	case model.Unavailable, model.Throttled, model.Canceled:
		return false
	}
	return true
}

// BranchesError is the error of a drop refused because N branches of ID
// exist. It matches model.ErrHasBranches; a server reads the count from it
// to tell its client, without the rest of a backend's message.
type BranchesError struct {
	ID model.ID
	N  int64
}

func (e *BranchesError) Error() string {
	return fmt.Sprintf("%v: %s has %d branch(es); drop them first", model.ErrHasBranches, e.ID, e.N)
}

// Is reports whether target is model.ErrHasBranches.
func (e *BranchesError) Is(target error) bool { return target == model.ErrHasBranches }

// HasBranchesError returns the error of a drop refused because n branches
// of id exist.
func HasBranchesError(id model.ID, n int64) error { return &BranchesError{ID: id, N: n} }
