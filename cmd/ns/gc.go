package main

import (
	"flag"
	"fmt"
	"time"

	"nameservice.dev/nameservice"
)

// defaultOlderThan is how old a purge must be before ns gc removes what it
// left (docs/s3.md, "Garbage collection"): far beyond the longest any
// client takes from its first read to its last write of one operation.
const defaultOlderThan = 24 * time.Hour

// ns gc removes what purges left: one line per object removed or kept,
// then the totals.
func init() {
	commands["gc"] = &command{
		usage:   "[--older-than D] [--dry-run] [--prefix P]",
		summary: "remove what purges left (object stores), once older than --older-than",
		example: "ns gc --older-than 48h --dry-run",
		nargs:   0,
		flags: func(fs *flag.FlagSet) {
			fs.Duration("older-than", defaultOlderThan, "keep what purges left less than this long ago")
			fs.Bool("dry-run", false, "print what would be removed, remove nothing")
			fs.String("prefix", "", "only IDs starting with P")
		},
		run: runGC,
	}
}

func runGC(c *call) error {
	olderThan := c.flags.Lookup("older-than").Value.(flag.Getter).Get().(time.Duration)
	dryRun := c.flags.Lookup("dry-run").Value.(flag.Getter).Get().(bool)
	if olderThan < 0 {
		return usagef("gc: --older-than %s: a duration cannot be negative", olderThan)
	}
	st, err := c.ns.Collect(c.ctx, nameservice.CollectOptions{
		Prefix: c.flags.Lookup("prefix").Value.String(), OlderThan: olderThan, DryRun: dryRun,
		Report: func(o nameservice.Collected) { c.printCollected(o, dryRun) },
	})
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(map[string]any{"removed": st.Removed, "kept": st.Kept, "dry_run": dryRun})
	}
	verb := "removed"
	if dryRun {
		verb = "would remove"
	}
	fmt.Fprintf(c.stdout, "%s %d, kept %d\n", verb, st.Removed, st.Kept)
	return nil
}

// printCollected prints one object the collector looked at.
func (c *call) printCollected(o nameservice.Collected, dryRun bool) {
	if c.json {
		_ = c.printJSON(map[string]any{"object": o.Object, "id": o.ID, "removed": o.Removed, "reason": o.Reason})
		return
	}
	verb := "kept"
	switch {
	case o.Removed && dryRun:
		verb = "would remove"
	case o.Removed:
		verb = "removed"
	}
	what := o.Object
	switch {
	case what == "":
		what = o.ID
	case o.ID != "":
		what += " (" + o.ID + ")"
	}
	fmt.Fprintf(c.stdout, "%s %s: %s\n", verb, what, o.Reason)
}
