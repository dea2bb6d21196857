package driver

import (
	"context"
	"errors"
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
	if err == nil {
		return Unknown
	}
	for _, s := range sentinelCodes {
		if errors.Is(err, s.err) {
			return s.code
		}
	}
	return Unknown
}
