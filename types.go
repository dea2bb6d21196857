package nameservice

import (
	"maps"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/model"
)

// The model types, defined in package model (the driver contract's Outcome
// and ListOptions in package driver) and re-exported here so users
// need import only this package.
type (
	ID          = model.ID
	Kind        = model.Kind
	Concern     = model.Concern
	Value       = model.Value
	Object      = model.Object
	Ref         = model.Ref
	Meta        = model.Meta
	Record      = model.Record
	Outcome     = driver.Outcome
	ListOptions = driver.ListOptions
	ErrorCode   = model.ErrorCode
	RecordError = model.RecordError
	GraphIndex  = model.GraphIndex
	Heads       = model.Heads
	// Error is the structured error of every operation: errors.As finds
	// it to read the code, the operation and the ID.
	Error = model.Error
)

// Kinds and concerns.
const (
	Ledger      = model.Ledger
	GraphSource = model.GraphSource
	Head        = model.Head
	Index       = model.Index
	Status      = model.Status
	Config      = model.Config

	// DefaultGraph names the graph whose index is the index's own pointer.
	DefaultGraph = model.DefaultGraph
)

// Sentinel errors; match with errors.Is.
var (
	ErrNotFound        = model.ErrNotFound
	ErrAlreadyExists   = model.ErrAlreadyExists
	ErrWrongKind       = model.ErrWrongKind
	ErrInvalidID       = model.ErrInvalidID
	ErrInvalidArgument = model.ErrInvalidArgument
	ErrThrottled       = model.ErrThrottled
	ErrUnavailable     = model.ErrUnavailable
	ErrUnsupported     = model.ErrUnsupported
	ErrInternal        = model.ErrInternal
	// ErrNotProvisioned: the table, bucket or container does not exist;
	// create it (`ns table create`, a bucket) before retrying.
	ErrNotProvisioned = model.ErrNotProvisioned
	// ErrPermissionDenied: the backend refused the credentials or the
	// permission; the error names the action to grant.
	ErrPermissionDenied = model.ErrPermissionDenied
	// ErrHasBranches: DropBranch refused a record that branches were
	// created from and still exist; the error names how many.
	ErrHasBranches = model.ErrHasBranches
	// ErrOutcomeUnknown: a write's answer was lost and what the store
	// holds cannot tell whether it landed (it comes with ErrUnavailable).
	// Read the record to see where things stand before writing again.
	ErrOutcomeUnknown = model.ErrOutcomeUnknown
)

// ParseID parses "name" or "name:branch"; see model.ParseID for the rules.
func ParseID(s string) (ID, error) { return model.ParseID(s) }

// ParseConcerns returns the concerns of a comma-separated list such as
// "head,index" (see model.ParseConcerns).
func ParseConcerns(s string) ([]Concern, error) { return model.ParseConcerns(s) }

// ErrorCodeOf classifies err (model.NotFound, model.Throttled, ...).
func ErrorCodeOf(err error) ErrorCode { return model.Code(err) }

// RefValue returns the head or index Value pointing at address at t.
func RefValue(address string, t int64) Value { return model.RefValue(address, t) }

// StatusValue returns a status Value at v with the given state and extra
// payload keys.
func StatusValue(v int64, state string, extra Object) Value {
	p := Object{}
	maps.Copy(p, extra.Clone())
	p["state"] = state
	return Value{V: v, Payload: p}
}

// ParseObject decodes a JSON object for use as a payload; "null" yields
// nil. It returns an error wrapping ErrInvalidArgument for anything else.
func ParseObject(raw []byte) (Object, error) { return model.ParseObject(raw) }
