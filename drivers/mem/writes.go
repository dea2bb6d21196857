package mem

import (
	"fmt"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/model"
)

// life is what the store records of the writes to one incarnation of a
// record.
type life struct {
	inc    string                                // the create's write ID
	writes [model.Config + 1]driverutil.WriteIDs // by concern
}

// write sets concern c of r to v by the write w, and records w for
// resends. The caller holds s.mu.
func (s *Store) write(r *model.Record, c model.Concern, v model.Value, w driver.Write) {
	s.set(r, c, v)
	if l := s.lives[r.ID]; l != nil && c.Valid() {
		l.writes[c].Push(driverutil.WriteTag(w.ID, v.V))
	}
}

// resent is the answer to a resend of w, the op of record id: nil when
// found (the store holds the write), else an error wrapping
// model.ErrOutcomeUnknown.
func resent(op string, id model.ID, w driver.Write, found bool) error {
	if found {
		return nil
	}
	return fmt.Errorf("mem: %s %s: %w", op, id, driver.OutcomeUnknown(
		"write %s is a resend and is not in the store: an earlier attempt may have reached a record purged since", w.ID))
}

// createdBy reports whether record id is the one the write w created. The
// caller holds s.mu.
func (s *Store) createdBy(id model.ID, w driver.Write) bool {
	l := s.lives[id]
	return l != nil && l.inc == w.ID
}
