package driver

import (
	"context"
	"fmt"
	"strings"
)

// Provisioner is an optional capability: a driver whose backend needs
// resources (a table, a lock table) created before records can be kept.
// Tools reach it by type assertion (`ns table create`, `ns-migrate
// --create-table`), so they need no backend-specific code.
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

// Layout is how a file-based driver (fs, s3etag, blob) splits a record into
// files, one of LayoutB and LayoutC. Every client of one directory or
// bucket must use the same layout.
type Layout int

// The layouts of the ns@v2 file format.
const (
	// LayoutB: {branch}.json holds identity, head, status and config;
	// {branch}.index.json holds the index. Fluree's own layout, the default.
	LayoutB Layout = iota
	// LayoutC: one file per concern, {branch}.head.json, .index.json,
	// .status.json and .config.json.
	LayoutC
)

// ParseLayout returns the layout named s: "b" (or "") or "c", in either
// case. It returns an error wrapping ErrInvalidArgument otherwise.
func ParseLayout(s string) (Layout, error) {
	switch strings.ToLower(s) {
	case "", "b":
		return LayoutB, nil
	case "c":
		return LayoutC, nil
	}
	return 0, fmt.Errorf("%w: unknown layout %q (want b or c)", ErrInvalidArgument, Clip(s, 64))
}

// String returns "b" or "c" ("layout(N)" for a value that is neither).
func (l Layout) String() string {
	switch l {
	case LayoutB:
		return "b"
	case LayoutC:
		return "c"
	}
	return fmt.Sprintf("layout(%d)", int(l))
}

// Valid returns an error wrapping ErrInvalidArgument when l is not LayoutB
// or LayoutC.
func (l Layout) Valid() error {
	if l != LayoutB && l != LayoutC {
		return fmt.Errorf("%w: unknown layout %d", ErrInvalidArgument, int(l))
	}
	return nil
}
