package main

import (
	"fmt"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
)

func init() {
	commands["table"] = &command{usage: "create", nargs: 1, run: func(c *call) error {
		if c.args[0] != "create" {
			return usagef("usage: ns table create")
		}
		p, ok := c.ns.Driver().(driver.Provisioner)
		if !ok {
			return fmt.Errorf("%w: this backend has no table to create", nameservice.ErrUnsupported)
		}
		if err := p.Provision(c.ctx); err != nil {
			return err
		}
		return c.done("table ready")
	}}
}
