package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/dynamodb"
)

func init() {
	var indexes bool
	commands["table"] = &command{usage: "create [--indexes] | upgrade | migrate-branches", nargs: 1,
		flags: func(fs *flag.FlagSet) {
			fs.BoolVar(&indexes, "indexes", false, "create: also the optional state-index and source-type-index (DynamoDB)")
		},
		run: func(c *call) error {
			switch c.args[0] {
			case "migrate-branches":
				return migrateBranches(c)
			case "upgrade":
				return upgradeTable(c, false)
			case "create":
				if indexes {
					return upgradeTable(c, true)
				}
				return createTable(c)
			}
			return usagef("usage: ns table create [--indexes] | upgrade | migrate-branches")
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

// indexedTable is a driver whose table can hold the schema's optional
// indexes (DynamoDB's state-index and source-type-index).
type indexedTable interface {
	ProvisionIndexes(ctx context.Context) (dynamodb.Upgrade, error)
	UpgradeTable(ctx context.Context) (dynamodb.Upgrade, error)
}

// upgradeTable adds the optional indexes to the table, creating it first
// when create is set, and back-fills what they index.
func upgradeTable(c *call, create bool) error {
	t, ok := c.ns.Driver().(indexedTable)
	if !ok {
		return fmt.Errorf("%w: this backend has no table indexes to add", nameservice.ErrUnsupported)
	}
	upgrade := t.UpgradeTable
	if create {
		upgrade = t.ProvisionIndexes
	}
	up, err := upgrade(c.ctx)
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(map[string]any{"added": up.Added, "backfilled": up.Backfilled})
	}
	added := "none"
	if len(up.Added) > 0 {
		added = strings.Join(up.Added, ", ")
	}
	fmt.Fprintf(c.stdout, "table ready; indexes added: %s; status_state back-filled on %d item(s)\n", added, up.Backfilled)
	return nil
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
