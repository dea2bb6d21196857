package driver

import "context"

// Provisioner is an optional capability: a driver whose backend needs
// resources (a table, a lock table) created before records can be kept.
// Tools reach it through NameService.Provision (`ns table create`,
// `ns-migrate --create-table`), so they need no backend-specific code.
type Provisioner interface {
	// Provision creates the resources the driver needs that do not exist
	// yet, and returns only once they are usable (a new table ACTIVE, with
	// its indexes and stream). It is idempotent: resources that exist are
	// left as they are, and Provision returns nil when nothing needs
	// creating. It returns an error wrapping ErrInvalidArgument when an
	// existing resource has the wrong shape (saying what differs),
	// ErrPermissionDenied when the credentials may not create or describe
	// it (naming the action), ErrUnavailable when it did not become usable
	// before ctx ended, and never deletes or changes existing data.
	Provision(ctx context.Context) error
}
