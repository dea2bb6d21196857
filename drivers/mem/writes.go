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

// wrote records the write w, of watermark v, to concern c of record id. The
// caller holds s.mu.
func (s *Store) wrote(id model.ID, c model.Concern, w driver.Write, v int64) {
	if l := s.lives[id]; l != nil && c.Valid() {
		l.writes[c].Push(driverutil.WriteTag(w.ID, v))
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
