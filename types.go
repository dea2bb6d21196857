package nameservice

import "nameservice.dev/nameservice/driver"

// The model types, defined in package driver and re-exported here so users
// need import only this package.
type (
	ID          = driver.ID
	Kind        = driver.Kind
	Concern     = driver.Concern
	Value       = driver.Value
	Object      = driver.Object
	Ref         = driver.Ref
	Meta        = driver.Meta
	Record      = driver.Record
	Outcome     = driver.Outcome
	ListOptions = driver.ListOptions
	ErrorCode   = driver.ErrorCode
	RecordError = driver.RecordError
	GraphIndex  = driver.GraphIndex
	Heads       = driver.Heads
	// Error is the structured error of every operation: errors.As finds
	// it to read the code, the operation and the ID.
	Error = driver.Error
)

// Kinds and concerns.
const (
	Ledger      = driver.Ledger
	GraphSource = driver.GraphSource
	Head        = driver.Head
	Index       = driver.Index
	Status      = driver.Status
	Config      = driver.Config

	// DefaultGraph names the graph whose index is the index's own pointer.
	DefaultGraph = driver.DefaultGraph
)

// Sentinel errors; match with errors.Is.
var (
	ErrNotFound        = driver.ErrNotFound
	ErrAlreadyExists   = driver.ErrAlreadyExists
	ErrWrongKind       = driver.ErrWrongKind
	ErrInvalidID       = driver.ErrInvalidID
	ErrInvalidArgument = driver.ErrInvalidArgument
	ErrThrottled       = driver.ErrThrottled
	ErrUnavailable     = driver.ErrUnavailable
	ErrUnsupported     = driver.ErrUnsupported
	ErrInternal        = driver.ErrInternal
	// ErrNotProvisioned: the table, bucket or container does not exist;
	// create it (`ns table create`, a bucket) before retrying.
	ErrNotProvisioned = driver.ErrNotProvisioned
	// ErrPermissionDenied: the backend refused the credentials or the
	// permission; the error names the action to grant.
	ErrPermissionDenied = driver.ErrPermissionDenied
	// ErrHasBranches: DropBranch refused a record that branches were
	// created from and still exist; the error names how many.
	ErrHasBranches = driver.ErrHasBranches
	// ErrOutcomeUnknown: a write's answer was lost and what the store
	// holds cannot tell whether it landed (it comes with ErrUnavailable).
	// Read the record to see where things stand before writing again.
	ErrOutcomeUnknown = driver.ErrOutcomeUnknown
)

// ParseID parses "name" or "name:branch"; see driver.ParseID for the rules.
func ParseID(s string) (ID, error) { return driver.ParseID(s) }

// ParseConcerns returns the concerns of a comma-separated list such as
// "head,index" (see driver.ParseConcerns).
func ParseConcerns(s string) ([]Concern, error) { return driver.ParseConcerns(s) }

// ErrorCodeOf classifies err (driver.NotFound, driver.Throttled, ...).
func ErrorCodeOf(err error) ErrorCode { return driver.Code(err) }

// RefValue returns the head or index Value pointing at address at t.
func RefValue(address string, t int64) Value { return driver.RefValue(address, t) }

// StatusValue returns a status Value at v with the given state and extra
// payload keys.
func StatusValue(v int64, state string, extra Object) Value {
	p := extra.Clone()
	if p == nil {
		p = Object{}
	}
	p["state"] = state
	return Value{V: v, Payload: p}
}

// ParseObject decodes a JSON object for use as a payload; "null" yields
// nil. It returns an error wrapping ErrInvalidArgument for anything else.
func ParseObject(raw []byte) (Object, error) { return driver.ParseObject(raw) }
