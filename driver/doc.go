// Package driver is the contract between the portable nameservice package and
// its backends. It holds the model (IDs, records, concerns, values), the small
// Driver interface every backend implements, the optional capability
// interfaces, and the error codes drivers report.
//
// Package driver imports nothing else of this module, so a backend can be
// written against it without pulling in the portable API.
//
// # Division of labour
//
// The portable package validates IDs and payloads, enforces the rules that can
// be checked before a write (a new status_v above the expected one, a head t
// equal to its payload's t, ...), classifies errors and runs retry loops.
// A driver does only what must be atomic in its backend: create a whole record,
// apply one conditional update to one concern and report the current value
// when the condition fails, retract, delete, and list.
//
// # Errors
//
// Drivers wrap the sentinel errors of this package (ErrNotFound,
// ErrAlreadyExists, ...) with context, for example
//
//	fmt.Errorf("dynamodb: update %s head: %w", id, driver.ErrNotFound)
//
// and Code maps any such error to an ErrorCode. A failed condition is not an
// error: it is an Outcome with Applied false.
package driver
