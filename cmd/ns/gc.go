package main

import (
	"flag"
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
	var prefix string
	var olderThan time.Duration
	var dryRun bool
	commands["gc"] = &command{
		usage:   "[--older-than D] [--dry-run] [--prefix P]",
		summary: "remove what purges left (object stores), once older than --older-than",
		example: "ns gc --older-than 48h --dry-run",
		nargs:   0,
		flags: func(fs *flag.FlagSet) {
			fs.DurationVar(&olderThan, "older-than", defaultOlderThan, "keep what purges left less than this long ago")
			fs.BoolVar(&dryRun, "dry-run", false, "print what would be removed, remove nothing")
			fs.StringVar(&prefix, "prefix", "", "only IDs starting with P")
		},
		run: func(c *call) error {
			if olderThan < 0 {
				return usagef("gc: --older-than %s: a duration cannot be negative", olderThan)
			}
			st, err := c.ns.Collect(c.ctx, nameservice.CollectOptions{
				Prefix: prefix, OlderThan: olderThan, DryRun: dryRun,
				Report: func(o nameservice.Collected) { c.printCollected(o, dryRun) },
			})
			if err != nil {
				return err
			}
			verb := "removed"
			if dryRun {
				verb = "would remove"
			}
			return c.output(map[string]any{"removed": st.Removed, "kept": st.Kept, "dry_run": dryRun},
				"%s %d, kept %d", verb, st.Removed, st.Kept)
		},
	}
}

// printCollected prints one object the collector looked at.
func (c *call) printCollected(o nameservice.Collected, dryRun bool) {
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
	_ = c.output(map[string]any{"object": o.Object, "id": o.ID, "removed": o.Removed, "reason": o.Reason},
		"%s %s: %s", verb, what, o.Reason)
}
