// Package guard holds the rules of the model, the same on every backend
// (docs/model.md). It wraps nothing: nameservice.NameService, the one layer
// between callers and a driver, checks every call against them before the
// driver is called, so a call that breaks a rule returns an error wrapping
// model.ErrInvalidArgument (or model.ErrInvalidID) that names the field
// and the limit, and nothing is written; the layer marks every error the
// driver returns as a BackendError. The rules:
//
//   - IDs follow model.ParseID's rules;
//   - every limit below, on payloads, addresses, source types,
//     dependencies and whole records;
//   - watermarks stay within [0, MaxWatermark], so that no increment a
//     driver makes (a retract's status_v + 1) can overflow, and a
//     compare-and-set moves its watermark forward;
//   - values Fluree can read: a content ID in canonical form with a digest
//     of at most 64 bytes, a branch count that fits Fluree's u32;
//   - every string valid UTF-8.
package guard

import (
	"fmt"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/model"
)

// CheckBranchRecord returns an error when rec may not be created as a
// branch: it breaks CheckRecord, or its branch name CheckBranchName.
func CheckBranchRecord(rec *model.Record) error {
	if err := CheckRecord(rec); err != nil {
		return err
	}
	return CheckBranchName(rec.ID.Branch)
}

// CheckReset returns an error wrapping ErrInvalidArgument when a reset of
// a head breaks a rule: head must be a born head and index, when given, an
// index (unborn to clear it) that CheckValue accepts.
func CheckReset(head model.Value, index *model.Value) error {
	if head.Unborn() {
		return invalid("head: a reset needs a commit")
	}
	if err := CheckValue(model.Head, head); err != nil {
		return err
	}
	if index != nil {
		if err := CheckValue(model.Index, *index); err != nil {
			return fmt.Errorf("index: %w", err)
		}
	}
	return nil
}

// CheckCollect returns an error wrapping ErrInvalidArgument when opts is
// malformed: a negative OlderThan, or a Prefix that is not valid UTF-8 or
// longer than an ID.
func CheckCollect(opts driver.CollectOptions) error {
	if opts.OlderThan < 0 {
		return invalid("older than %s: a duration cannot be negative", opts.OlderThan)
	}
	return CheckList(driver.ListOptions{Prefix: opts.Prefix})
}
