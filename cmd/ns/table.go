package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"strings"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/drivers/dynamodb"
)

func init() {
	commands["table"] = &command{summary: "create, upgrade or migrate the backend's table (DynamoDB)", subs: map[string]*command{
		"create": tableCreateCommand(),
		"upgrade": {usage: "", nargs: 0,
			summary: "add the optional state-index and source-type-index to the table and back-fill what they index",
			example: "ns --url 'dynamodb://fluree-nameservice?region=eu-west-1' table upgrade",
			run:     func(c *call) error { return upgradeTable(c, false) }},
		"migrate-branches": {usage: "", nargs: 0,
			summary: "rename the branch attributes earlier versions wrote (source_branch) to Fluree's (bp_source)",
			example: "ns --url 'dynamodb://fluree-nameservice?region=eu-west-1' table migrate-branches",
			run:     migrateBranches},
	}}
}

func tableCreateCommand() *command {
	var indexes bool
	return &command{usage: "[--indexes]", nargs: 0, creates: true,
		summary: "create the table the URL names, with its index and stream, and wait until it is active",
		example: "ns --url 'dynamodb://fluree-nameservice?region=eu-west-1' table create --indexes",
		flags: func(fs *flag.FlagSet) {
			fs.BoolVar(&indexes, "indexes", false, "also the optional state-index and source-type-index (DynamoDB)")
		},
		run: func(c *call) error {
			if indexes {
				return upgradeTable(c, true)
			}
			if err := c.ns.Provision(c.ctx); err != nil {
				return err
			}
			return c.done("table ready")
		}}
}

// upgradeTable adds the optional indexes to the table, creating it first
// when create is set, and back-fills what they index.
func upgradeTable(c *call, create bool) error {
	var t interface { // a table that can hold the optional indexes (DynamoDB's)
		ProvisionIndexes(ctx context.Context) (dynamodb.Upgrade, error)
		UpgradeTable(ctx context.Context) (dynamodb.Upgrade, error)
	}
	if !c.ns.As(&t) {
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
	added := cmp.Or(strings.Join(up.Added, ", "), "none")
	return c.output(map[string]any{"added": up.Added, "backfilled": up.Backfilled},
		"table ready; indexes added: %s; status_state back-filled on %d item(s)", added, up.Backfilled)
}

// migrateBranches renames, in place, the branch attributes earlier versions
// wrote to those Fluree reads.
func migrateBranches(c *call) error {
	var m interface { // earlier versions wrote other branch attributes (DynamoDB's source_branch)
		MigrateBranchAttributes(ctx context.Context) (int, error)
	}
	if !c.ns.As(&m) {
		return fmt.Errorf("%w: this backend has no branch attributes to migrate", nameservice.ErrUnsupported)
	}
	n, err := m.MigrateBranchAttributes(c.ctx)
	if err != nil {
		return err
	}
	return c.output(map[string]any{"migrated": n}, "migrated %d meta item(s) from source_branch to bp_source", n)
}
