package main

import (
	"context"
	"fmt"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
)

func init() {
	commands["table"] = &command{summary: "create or migrate the backend's table (DynamoDB)", subs: map[string]*command{
		"create": {usage: "", nargs: 0, creates: true,
			summary: "create the table the URL names, with its index and stream, and wait until it is active",
			example: "ns --url 'dynamodb://fluree-nameservice?region=eu-west-1' table create",
			run:     createTable},
		"migrate-branches": {usage: "", nargs: 0,
			summary: "rename the branch attributes earlier versions wrote (source_branch) to Fluree's (bp_source)",
			example: "ns --url 'dynamodb://fluree-nameservice?region=eu-west-1' table migrate-branches",
			run:     migrateBranches},
	}}
}

func createTable(c *call) error {
	p, ok := c.ns.Driver().(driver.Provisioner)
	if !ok {
		return fmt.Errorf("%w: this backend has no table to create", nameservice.ErrUnsupported)
	}
	if err := p.Provision(c.ctx); err != nil {
		return err
	}
	return c.done("table ready")
}

// branchMigrator is a driver whose tables earlier versions wrote with other
// branch attributes (the DynamoDB driver's source_branch).
type branchMigrator interface {
	MigrateBranchAttributes(ctx context.Context) (int, error)
}

// migrateBranches renames, in place, the branch attributes earlier versions
// wrote to those Fluree reads.
func migrateBranches(c *call) error {
	m, ok := c.ns.Driver().(branchMigrator)
	if !ok {
		return fmt.Errorf("%w: this backend has no branch attributes to migrate", nameservice.ErrUnsupported)
	}
	n, err := m.MigrateBranchAttributes(c.ctx)
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(map[string]any{"migrated": n})
	}
	fmt.Fprintf(c.stdout, "migrated %d meta item(s) from source_branch to bp_source\n", n)
	return nil
}
