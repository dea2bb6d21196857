package main

import (
	"flag"
	"fmt"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/lease"
)

func init() {
	var prefix string
	commands["lease"] = &command{summary: "list and break the leases held in records' status (package lease)", subs: map[string]*command{
		"list": {usage: "[--prefix P]", nargs: 0,
			summary: "print every lease held, one JSON line each",
			example: "ns lease list --prefix tenant-eu/",
			flags:   func(fs *flag.FlagSet) { fs.StringVar(&prefix, "prefix", "", "only records whose ID starts with P") },
			run: func(c *call) error {
				for rec, err := range c.ns.List(c.ctx, nameservice.ListOptions{Prefix: prefix, IncludeRetracted: true}) {
					if err != nil {
						return err
					}
					for _, l := range lease.Held(rec) {
						c.printJSON(l)
					}
				}
				return nil
			}},
		"break": {usage: "ID NAME", nargs: 2, ids: true,
			summary: "break lease NAME of ID: its holder's fencing token is refused from then on",
			example: "ns lease break mydb index",
			run: func(c *call) error {
				id, name := c.args[0], c.args[1]
				info, err := lease.Break(c.ctx, c.ns, id, name)
				if err != nil {
					return err
				}
				if info == nil {
					return fmt.Errorf("%s holds no %s lease: %w", id, name, nameservice.ErrNotFound)
				}
				return c.output(info, "broke lease %s on %s held by %s (token %d)", name, id, info.Holder, info.Token)
			}},
	}}
}
