package main

import (
	"flag"
	"fmt"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/lease"
)

func init() {
	var prefix string
	commands["lease"] = &command{usage: "list [--prefix P] | break ID NAME", nargs: -1,
		flags: func(fs *flag.FlagSet) { fs.StringVar(&prefix, "prefix", "", "only records whose ID starts with P") },
		run: func(c *call) error {
			switch {
			case len(c.args) == 1 && c.args[0] == "list":
				return listLeases(c, prefix)
			case len(c.args) == 3 && c.args[0] == "break":
				return breakLease(c, c.args[1], c.args[2])
			}
			return usagef("usage: ns lease list [--prefix P] | ns lease break ID NAME")
		}}
}

func listLeases(c *call, prefix string) error {
	for rec, err := range c.ns.List(c.ctx, nameservice.ListOptions{Prefix: prefix, IncludeRetracted: true}) {
		if err != nil {
			return err
		}
		for _, l := range lease.Held(rec) {
			c.printJSON(l)
		}
	}
	return nil
}

func breakLease(c *call, id, name string) error {
	info, err := lease.Break(c.ctx, c.ns, id, name)
	if err != nil {
		return err
	}
	if info == nil {
		return fmt.Errorf("%s holds no %s lease: %w", id, name, nameservice.ErrNotFound)
	}
	if c.json {
		c.printJSON(info)
	} else {
		fmt.Fprintf(c.stdout, "broke lease %s on %s held by %s (token %d)\n", name, id, info.Holder, info.Token)
	}
	return nil
}
