package main

import (
	"context"
	"fmt"

	"nameservice.dev/nameservice"
)

// tableCreator is the capability of drivers backed by a table that must be
// created before use (DynamoDB).
type tableCreator interface {
	EnsureTable(ctx context.Context) error
}

func init() {
	commands["table"] = &command{usage: "create", nargs: 1, run: func(c *call) error {
		if c.args[0] != "create" {
			return usagef("usage: ns table create")
		}
		tc, ok := c.ns.Driver().(tableCreator)
		if !ok {
			return fmt.Errorf("%w: this backend has no table to create", nameservice.ErrUnsupported)
		}
		if err := tc.EnsureTable(c.ctx); err != nil {
			return err
		}
		return c.done("table ready")
	}}
}
