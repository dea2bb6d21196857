package guard

import (
	"context"
	"fmt"

	"nameservice.dev/nameservice/driver"
)

var _ driver.Brancher = (*Driver)(nil)

// brancher returns the driver's branch operations, or an error wrapping
// ErrUnsupported when it has none.
func (g *Driver) brancher() (driver.Brancher, error) {
	b, ok := g.d.(driver.Brancher)
	if !ok {
		return nil, fmt.Errorf("%w: this backend's driver cannot create, drop or reset branches", driver.ErrUnsupported)
	}
	return b, nil
}

// CreateBranch implements driver.Brancher: rec must pass CheckRecord and
// its branch name CheckBranchName.
func (g *Driver) CreateBranch(ctx context.Context, rec *driver.Record) (*driver.Record, error) {
	if err := CheckRecord(rec); err != nil {
		return nil, err
	}
	if err := CheckBranchName(rec.ID.Branch); err != nil {
		return nil, err
	}
	b, err := g.brancher()
	if err != nil {
		return nil, err
	}
	out, err := b.CreateBranch(ctx, rec)
	return out, FromBackend(err)
}

// DropBranch implements driver.Brancher: id must be valid.
func (g *Driver) DropBranch(ctx context.Context, id driver.ID) error {
	if err := id.Validate(); err != nil {
		return err
	}
	b, err := g.brancher()
	if err != nil {
		return err
	}
	return FromBackend(b.DropBranch(ctx, id))
}

// ResetHead implements driver.Brancher: id must be valid, head a born head
// and index, when given, an index (unborn to clear it) that CheckValue
// accepts.
func (g *Driver) ResetHead(ctx context.Context, id driver.ID, head driver.Value, index *driver.Value) (*driver.Record, error) {
	if err := id.Validate(); err != nil {
		return nil, err
	}
	if head.Unborn() {
		return nil, invalid("head: a reset needs a commit")
	}
	if err := CheckValue(driver.Head, head); err != nil {
		return nil, err
	}
	if index != nil {
		if err := CheckValue(driver.Index, *index); err != nil {
			return nil, fmt.Errorf("index: %w", err)
		}
	}
	b, err := g.brancher()
	if err != nil {
		return nil, err
	}
	prev, err := b.ResetHead(ctx, id, head, index)
	return prev, FromBackend(err)
}
