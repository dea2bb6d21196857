package main

import (
	"encoding/json"
	"flag"
	"fmt"

	"nameservice.dev/nameservice"
)

func init() {
	commands["lookup"] = &command{usage: "ID", nargs: 1, run: func(c *call) error {
		rec, err := c.ns.Lookup(c.ctx, c.args[0])
		if err != nil {
			return err
		}
		if c.json {
			c.printJSON(rec)
			return nil
		}
		b, err := json.MarshalIndent(rec, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "%s\n", b)
		return nil
	}}
	commands["list"] = listCommand()
}

func listCommand() *command {
	var kind, prefix string
	var retracted bool
	return &command{usage: "[--kind ledger|graph_source] [--prefix P] [--retracted]", nargs: 0,
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&kind, "kind", "", "")
			fs.StringVar(&prefix, "prefix", "", "")
			fs.BoolVar(&retracted, "retracted", false, "")
		},
		run: func(c *call) error {
			opts := nameservice.ListOptions{Kind: nameservice.Kind(kind), Prefix: prefix, IncludeRetracted: retracted}
			if kind != "" && !opts.Kind.Valid() {
				return usagef("--kind %q is neither ledger nor graph_source", kind)
			}
			for rec, err := range c.ns.List(c.ctx, opts) {
				if err != nil {
					return err
				}
				c.printJSON(rec) // JSON lines, with or without --json
			}
			return nil
		}}
}
