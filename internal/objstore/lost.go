package objstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/telemetry"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// Writes whose answer is lost (see driver.Driver).
//
// Every write of a record names itself with its driver.Write: a create
// takes the write's ID as the record's incarnation token, and every other
// write puts an entry ("ID@v", "ID@retract" or "ID@purge") first in
// f:writeIDs of the file it writes, which keeps the last few. When an
// attempt's answer is lost (Store.MaybeApplied), the write reads the file
// again (resolveLost): its entry (or token) means it landed; the file still
// at the attempt's precondition, and the record still the one the write
// was decided on, means it did not, and the same request is sent again (at
// most one of them lands); anything else is an error wrapping
// model.ErrOutcomeUnknown, never a conflict, a not found or a second
// write. A resend (driver.Write.Resend) writes nothing: it is done when
// its entry (or token) is found, or for a retract the record retracted.

// maxResends bounds how often a write whose answers were lost is sent
// again after reading showed it had not landed.
const maxResends = 8

// writeOf returns the Write of ctx, checked (its ID is stored).
func (r *Records) writeOf(ctx context.Context) (driver.Write, error) {
	w := driver.WriteOf(ctx)
	if err := w.Validate(); err != nil {
		return driver.Write{}, fmt.Errorf("%s: %w", r.cfg.Name, err)
	}
	return w, nil
}

func hasEntry(doc *jsonld.File, entry string) bool {
	return doc != nil && slices.Contains(doc.WriteIDs, entry)
}

// isPurgeMark reports whether doc is a mark a purge left (not a
// collector's, nor a branch create's fence): it records the purge.
func isPurgeMark(doc *jsonld.File) bool {
	return doc.Purged && slices.ContainsFunc(doc.WriteIDs, func(e string) bool { return strings.HasSuffix(e, "@purge") })
}

// createdBy reports whether doc, a defining file, shows that the create
// with token tok landed: the record it made, or the mark of its purge.
func createdBy(doc *jsonld.File, tok string) bool {
	return doc != nil && doc.Incarnation == tok && (!doc.Purged || isPurgeMark(doc))
}

// landing is what became of one attempt of a write.
type landing int

const (
	// refused: the store refused it (a failed precondition, a missing
	// object, throttling): nothing was written.
	refused landing = iota
	landed
	// lost: no answer, or a 5xx: it may have landed.
	lost
)

// attempt sends one conditional write of data to key; its error is the
// store's for a write that failed for good, or the cause of a lost one.
func (r *Records) attempt(ctx context.Context, id model.ID, key string, pc Precondition, data []byte) (landing, error) {
	tag, err := r.store.Put(ctx, key, data, pc)
	switch {
	case err == nil:
		r.remember(id, key, tag, data)
		return landed, nil
	case errors.Is(err, ErrPrecondition):
		// HTTP's 412 on an object store, a changed file on a file system.
		code := "412"
		if r.cfg.LocalReads {
			code = "file changed"
		}
		telemetry.PreconditionFailed(ctx, code)
		telemetry.Retry(ctx, "precondition failed")
		return refused, nil
	case r.cfg.RetryThrottled && errors.Is(err, model.ErrThrottled):
		telemetry.Retry(ctx, "throttled")
		return refused, nil
	case errors.Is(err, ErrMissing):
		// Removed since it was read (a collector, after a purge): the
		// caller's fresh read decides.
		r.cache.drop(key)
		telemetry.Retry(ctx, "object removed")
		return refused, nil
	case r.store.MaybeApplied(err) && ctx.Err() == nil:
		r.cache.drop(key)
		telemetry.Retry(ctx, "answer lost")
		return lost, err
	}
	return refused, err
}

// sent is a write whose answer may be lost: the request, to send again as
// it was, and how to tell whether it landed.
type sent struct {
	id   model.ID
	key  string
	pc   Precondition
	data []byte
	// settle reads the store: true when the write landed, false when
	// it may be sent again, else an error (ErrOutcomeUnknown when it
	// cannot tell).
	settle func(ctx context.Context, cause error) (bool, error)
	// gate, when set, is called before each resend; its error stops them
	// (a branch create's deadline).
	gate func() error
}

// send makes one attempt of s, establishing whether it landed when its
// answer is lost (resolveLost); done is false when the store refused it.
func (r *Records) send(ctx context.Context, s *sent) (done bool, err error) {
	l, err := r.attempt(ctx, s.id, s.key, s.pc, s.data)
	if l != lost {
		return l == landed, err
	}
	err = r.resolveLost(ctx, s, err)
	return err == nil, err
}

// resolveLost establishes whether s landed after an attempt whose answer
// was lost (cause), sending it again while reading shows it has not; nil
// when it landed.
func (r *Records) resolveLost(ctx context.Context, s *sent, cause error) error {
	for n := 0; ; n++ {
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %s: %w: the outcome is unknown: %v", r.cfg.Name, r.object(s.key), ctx.Err(), cause)
		}
		done, err := s.settle(ctx, cause)
		if err != nil || done {
			return err
		}
		if n == maxResends {
			return r.unknown(s.key, "%d attempts whose answers were lost, the last: %v", n+1, cause)
		}
		if err := r.backoff(ctx, n+1); err != nil {
			return err
		}
		if s.gate != nil {
			if err := s.gate(); err != nil {
				return r.unknown(s.key, "the answer was lost (%v), and it may not be sent again: %v", cause, err)
			}
		}
		l, err := r.attempt(ctx, s.id, s.key, s.pc, s.data)
		switch {
		case l == landed:
			return nil
		case l == lost:
			cause = err
		case err != nil:
			return r.unknown(s.key, "an earlier attempt's answer was lost (%v), and sending it again failed: %v", cause, err)
		}
	}
}

// unknown returns the error of a write whose outcome cannot be established.
func (r *Records) unknown(key, format string, args ...any) error {
	r.cache.drop(key)
	return fmt.Errorf("%s: %s: %w", r.cfg.Name, r.object(key), driver.OutcomeUnknown(format, args...))
}

// readBack reads key after a lost answer (cause): nil when absent; its doc
// is nil when it is not a file of id.
func (r *Records) readBack(ctx context.Context, id model.ID, key string, cause error) (*cached, error) {
	obj, err := r.get(ctx, key)
	if err != nil {
		return nil, r.unknown(key, "%v; reading it back failed: %v", cause, err)
	}
	if obj == nil {
		return nil, nil
	}
	if d, err := r.decodeDoc(id, key, obj); err == nil {
		return d, nil
	}
	return obj, nil
}

// readLanded reads key back after a lost answer (cause): done when landed
// finds the write in the file, which is then cached.
func (r *Records) readLanded(ctx context.Context, id model.ID, key string, cause error, landed func(*jsonld.File) bool) (now *cached, done bool, err error) {
	now, err = r.readBack(ctx, id, key, cause)
	if err != nil || now == nil || now.doc == nil || !landed(now.doc) {
		return now, false, err
	}
	r.cache.put(key, *now)
	return now, true, nil
}

// settleOn is the settle of a write to key under pc, decided on prev (the
// file at pc's tag): landed when landed finds it in the file read back,
// sent again while the file still meets pc, unknown once the file was
// written since.
func (r *Records) settleOn(id model.ID, key string, pc Precondition, prev *jsonld.File,
	landed func(*jsonld.File) bool) func(context.Context, error) (bool, error) {
	return func(ctx context.Context, cause error) (bool, error) {
		now, done, err := r.readLanded(ctx, id, key, cause, landed)
		if err != nil || done || r.holds(now, pc, prev) {
			return done, err
		}
		return false, r.unknown(key, "the answer was lost (%v), and the record was written since, by another writer or a purge", cause)
	}
}

// errResend is the cause given for a write marked as a resend.
var errResend = errors.New("the write is a resend")

// resent settles a write marked as a resend without writing anything: nil
// when done finds the write in the file at key, else an error wrapping
// model.ErrOutcomeUnknown (the earlier attempt may have landed on a record
// purged since, or may land still).
func (r *Records) resent(ctx context.Context, id model.ID, key string, done func(*jsonld.File) bool) error {
	if _, ok, err := r.readLanded(ctx, id, key, errResend, done); err != nil || ok {
		return err
	}
	return r.unknown(key, "%v, and the store holds no trace of an earlier attempt", errResend)
}

// holds reports whether obj, as read now, still meets pc, the
// precondition of an attempt decided on prev (the file at pc's tag; nil
// for an absent one). A tag proves that nothing was written since only
// when it cannot come back: unique tags (Config.UniqueTags), or bytes
// holding a token or entries, which no later write repeats.
func (r *Records) holds(obj *cached, pc Precondition, prev *jsonld.File) bool {
	if pc.Absent {
		return obj == nil
	}
	tagged := prev != nil && (prev.Incarnation != "" || len(prev.WriteIDs) > 0)
	return obj != nil && NormTag(obj.tag) == NormTag(pc.Tag) && (r.cfg.UniqueTags || tagged)
}
