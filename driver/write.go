package driver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"nameservice.dev/nameservice/model"
)

// Write identifies one logical write across its attempts. A caller that may
// send a write more than once (a server resending a client's request, a
// client whose answer was lost) puts one in the context of every attempt
// with WithWrite; without one, a driver names each call's write itself.
//
// A driver records the write's ID with what the write changes (among a
// concern's last write IDs; a create derives the record's incarnation from
// it), so that a later attempt, in this process or another, can recognise
// the write as its own. Every attempt of a write is conditioned so that it
// can land at most once, and never on a record created after the write's
// first attempt: a resend that cannot establish what an earlier attempt did
// returns an error wrapping ErrOutcomeUnknown, never a conflict, a not
// found or a second write.
type Write struct {
	// ID names the write: the same on every attempt, unique among writes.
	// It is 1 to MaxWriteIDBytes bytes of [A-Za-z0-9_-].
	ID string
	// Resend says an earlier attempt of this write may have been applied,
	// by this process or another. The driver then applies the write only
	// where it can prove the earlier attempt did not land; it reports the
	// write applied where it finds it landed, and ErrOutcomeUnknown
	// otherwise.
	Resend bool
}

// MaxWriteIDBytes is the longest Write.ID.
const MaxWriteIDBytes = 64

type writeKey struct{}

// WithWrite returns ctx carrying w for the driver writes made under it.
func WithWrite(ctx context.Context, w Write) context.Context {
	return context.WithValue(ctx, writeKey{}, w)
}

// WriteOf returns the Write ctx carries, or a new one with a random ID
// that is not a resend.
func WriteOf(ctx context.Context) Write {
	if w, ok := WriteFrom(ctx); ok {
		return w
	}
	return Write{ID: NewWriteID()}
}

// WriteFrom returns the Write ctx carries, if any.
func WriteFrom(ctx context.Context) (Write, bool) {
	w, ok := ctx.Value(writeKey{}).(Write)
	return w, ok && w.ID != ""
}

// NewWriteID returns a random write ID: 32 hex digits.
func NewWriteID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Validate checks w.ID's length and alphabet.
func (w Write) Validate() error {
	if len(w.ID) == 0 || len(w.ID) > MaxWriteIDBytes {
		return fmt.Errorf("%w: a write ID is 1 to %d bytes", model.ErrInvalidArgument, MaxWriteIDBytes)
	}
	for _, r := range w.ID {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return fmt.Errorf("%w: a write ID holds only letters, digits, '_' and '-'", model.ErrInvalidArgument)
		}
	}
	return nil
}

// OutcomeUnknown returns the error of a write whose outcome cannot be
// established: it wraps ErrUnavailable and ErrOutcomeUnknown, and says why.
func OutcomeUnknown(format string, args ...any) error {
	return fmt.Errorf("%w: %w: %s", model.ErrUnavailable, model.ErrOutcomeUnknown, fmt.Sprintf(format, args...))
}
