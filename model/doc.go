// Package model is what the nameservice keeps and how it fails: record IDs,
// records and their four concerns (head, index, status, config), values and
// JSON payloads, the record JSON form, and the error type with its codes and
// sentinels.
//
// Users need not import it: package nameservice re-exports its names
// (nameservice.Record is model.Record, nameservice.ErrNotFound is
// model.ErrNotFound). Drivers import it beside package driver, whose contract
// is written in its types. Of this module it uses only the JSON engine
// (internal/jsonx) and the message helper (internal/text), so a driver built
// on it pulls in neither the portable API nor another driver.
//
// # Errors
//
// Drivers wrap the sentinels (ErrNotFound, ErrAlreadyExists, ...) with
// context, for example
//
//	fmt.Errorf("dynamodb: update %s head: %w", id, model.ErrNotFound)
//
// and Code maps any such error to an ErrorCode. The portable API returns an
// *Error carrying the code, the operation and the ID; errors.Is matches it
// against the sentinel of its code.
package model
