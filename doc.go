// Package nameservice keeps the pointers a distributed database lives by (the
// commit head, the index head, an operational status and a config, per
// name:branch) in a backend chosen by URL, with the same compare-and-set
// semantics on every backend.
//
// # Opening
//
// Open a nameservice by URL after importing the drivers you want:
//
//	import _ "nameservice.dev/nameservice/drivers/all"
//
//	ns, err := nameservice.Open(ctx, "file:///var/lib/ns")
//
// or wrap a driver you built yourself with New.
//
// # The model
//
// A record is a ledger or a graph source with four concerns, each a Value: a
// watermark and a payload. Watermarks only move forward. Head and index move
// by publishing (applied only when t is above the current t) or by
// compare-and-set (applied only when the caller's expected value is the
// current one). Status and config move only by compare-and-set. A push that
// is not applied is not an error: its Outcome carries the current value.
//
// # Errors
//
// Errors wrap the sentinels below (ErrNotFound, ErrAlreadyExists,
// ErrWrongKind, ErrInvalidID, ...); match them with errors.Is, or classify any
// error with ErrorCodeOf.
package nameservice
