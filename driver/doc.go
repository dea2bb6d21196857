// Package driver is the contract between the portable nameservice package and
// its backends: the small Driver interface every backend implements, the
// conditions and pages it speaks, the Write that names a write across its
// attempts, and the optional capabilities a driver declares by implementing
// them:
//
//   - Watcher (and ExactWatcher): a native change feed;
//   - Versioner: which records changed, from a listing alone;
//   - Provisioner: resources to create first (a table);
//   - Collector: removes what purges left behind;
//   - Prober: checks the backend enforces the conditions the driver relies on;
//   - Brancher: branches created and dropped with their source's count;
//   - CommitIndexer: Fluree's commit index kept beside each ledger.
//   - HeadsReader: a ledger's head and index in one cheap read.
//
// The model the contract is written in (IDs, records, concerns, values) and
// the errors a driver reports are package model's. Of this module, package
// driver imports only model, so a backend can be written against the two
// without pulling in the portable API.
//
// Callers never hold a driver: nameservice.NameService finds a capability
// by type assertion and offers it as a method of its own, which answers an
// error wrapping model.ErrUnsupported when the driver lacks it.
//
// # Division of labour
//
// The NameService checks every call against the rules of package guard
// before the driver is called: IDs, payloads, limits and the rules that can
// be checked before a write (a new status_v above the expected one, a head
// t equal to its payload's t, values Fluree can read); the portable package
// classifies errors and runs retry loops.
// A driver does only what must be atomic in its backend: create a whole
// record, apply one conditional update to one concern and report the
// current value when the condition fails, retract, delete, and list.
//
// # Errors
//
// Drivers wrap the sentinel errors of package model with context (see
// model's doc). A failed condition is not an error: it is an Outcome with
// Applied false.
package driver
