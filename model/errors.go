package model

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrorCode classifies an error returned by a driver.
type ErrorCode int

// The error codes. Unknown is the code of an error that wraps none of the
// sentinels below.
const (
	Unknown         ErrorCode = iota
	NotFound                  // the record (or the concern) does not exist
	AlreadyExists             // a create found the ID taken, retracted or not
	WrongKind                 // the operation does not apply to the record's kind
	InvalidArgument           // the caller's input is malformed
	Throttled                 // the backend refused for load, after the driver's retries
	Unavailable               // the backend could not be reached, or timed out
	Unsupported               // the driver or backend cannot do this
	Internal                  // the backend holds data the driver cannot interpret
	Canceled                  // the caller's context was canceled or its deadline passed
	// NotProvisioned: the table, bucket or container the driver was opened
	// on does not exist. A lasting failure: retrying will not help until an
	// operator creates it (`ns table create`, a bucket).
	NotProvisioned
	// PermissionDenied: the backend refused the credentials or the
	// permission for the request. A lasting failure: retrying will not help
	// until an operator grants the action named in the error.
	PermissionDenied
	// HasBranches: a branch cannot be dropped while branches created from
	// it still exist; the error names how many.
	HasBranches
)

var codeNames = [...]string{
	Unknown: "Unknown", NotFound: "NotFound", AlreadyExists: "AlreadyExists",
	WrongKind: "WrongKind", InvalidArgument: "InvalidArgument", Throttled: "Throttled",
	Unavailable: "Unavailable", Unsupported: "Unsupported", Internal: "Internal",
	Canceled: "Canceled", NotProvisioned: "NotProvisioned", PermissionDenied: "PermissionDenied",
	HasBranches: "HasBranches",
}

func (c ErrorCode) String() string {
	if c >= 0 && int(c) < len(codeNames) {
		return codeNames[c]
	}
	return "ErrorCode(?)"
}

// Sentinel errors. Drivers wrap them with %w; callers match them with
// errors.Is. ErrInvalidID is an InvalidArgument that names a malformed ID.
var (
	ErrNotFound        = errors.New("not found")
	ErrAlreadyExists   = errors.New("already exists")
	ErrWrongKind       = errors.New("wrong kind")
	ErrInvalidArgument = errors.New("invalid argument")
	ErrInvalidID       = errors.New("invalid id")
	ErrThrottled       = errors.New("throttled")
	ErrUnavailable     = errors.New("unavailable")
	ErrUnsupported     = errors.New("unsupported")
	ErrInternal        = errors.New("internal error")
	// ErrNotProvisioned: the table, bucket or container does not exist.
	ErrNotProvisioned = errors.New("not provisioned")
	// ErrPermissionDenied: the backend refused the credentials or permission.
	ErrPermissionDenied = errors.New("permission denied")
	// ErrHasBranches: a drop refused because branches of the record exist.
	ErrHasBranches = errors.New("has branches")
	// ErrOutcomeUnknown: a write may or may not have been applied (its
	// answer was lost, and what the backend holds cannot tell). It always
	// comes with ErrUnavailable, whose code it has: a caller that resends
	// must send the same Write (see WithWrite), marked as a resend.
	ErrOutcomeUnknown = errors.New("outcome unknown")
)

var sentinelCodes = []struct {
	err  error
	code ErrorCode
}{
	{ErrNotFound, NotFound},
	{ErrAlreadyExists, AlreadyExists},
	{ErrWrongKind, WrongKind},
	{ErrInvalidArgument, InvalidArgument},
	{ErrInvalidID, InvalidArgument},
	{ErrNotProvisioned, NotProvisioned},
	{ErrPermissionDenied, PermissionDenied},
	{ErrHasBranches, HasBranches},
	{ErrThrottled, Throttled},
	{ErrUnavailable, Unavailable},
	{ErrUnsupported, Unsupported},
	{ErrInternal, Internal},
	{context.Canceled, Canceled},
	{context.DeadlineExceeded, Canceled},
}

// Sentinel returns the sentinel error of code c, the first Code maps to c
// (ErrInvalidArgument for InvalidArgument, context.Canceled for Canceled),
// or nil for Unknown.
func (c ErrorCode) Sentinel() error {
	for _, s := range sentinelCodes {
		if s.code == c {
			return s.err
		}
	}
	return nil
}

// Code returns the code of the first sentinel err wraps, or Unknown. Code(nil)
// is Unknown.
func Code(err error) ErrorCode {
	for _, s := range sentinelCodes {
		if errors.Is(err, s.err) {
			return s.code
		}
	}
	return Unknown
}

// Error is the error of one operation of the portable API: its code, the
// operation ("publish commit"), the record (zero when there is none, or
// when its ID was what was refused), and the cause. Programs read it with
// errors.As; errors.Is matches the sentinel of its Code as well as
// whatever the cause matches.
type Error struct {
	Code ErrorCode
	Op   string
	ID   ID
	Err  error
}

// Error names the operation, the ID once (not again when the cause names
// it already), and the cause.
func (e *Error) Error() string {
	msg := e.Op
	if !e.ID.IsZero() && !names(e.Err, e.ID) {
		msg += " " + e.ID.String()
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is the sentinel of e's Code. A canceled
// operation matches only what its cause matches (context.Canceled or
// context.DeadlineExceeded), which one code cannot tell apart.
func (e *Error) Is(target error) bool {
	return e.Code != Canceled && target != nil && e.Code.Sentinel() == target
}

// names reports whether err's message names id: an *Error for id inside
// it does, and so does a driver's message that spells it.
func names(err error, id ID) bool {
	if err == nil {
		return false
	}
	if inner, ok := errors.AsType[*Error](err); ok && inner.ID == id {
		return true
	}
	return strings.Contains(err.Error(), id.String())
}

// RecordError reports one record that List could not read. It wraps the
// reason, typically ErrInternal for stored data that does not decode.
type RecordError struct {
	ID     ID     // the record, when its key gives the ID; zero otherwise
	Object string // the file, key or item that could not be read
	Err    error
}

// Error names the record and the object once each: most drivers' errors
// name the object already.
func (e *RecordError) Error() string {
	msg := e.Err.Error()
	if !strings.Contains(msg, e.Object) {
		msg = e.Object + ": " + msg
	}
	if e.ID.IsZero() {
		return msg
	}
	return fmt.Sprintf("record %s: %s", e.ID, msg)
}

func (e *RecordError) Unwrap() error { return e.Err }
