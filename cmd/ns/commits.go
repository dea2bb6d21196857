package main

import (
	"fmt"
)

// ns commits reads and prunes Fluree's commit index of a ledger (DynamoDB
// and file backends): pending prints the entries above a t, one "t cid"
// line each, as Fluree's indexer reads them; prune removes those up to a t.
func init() {
	commands["commits"] = &command{usage: "pending ID [SINCE_T] | prune ID UP_TO_T", nargs: -1, run: func(c *call) error {
		switch {
		case len(c.args) >= 2 && len(c.args) <= 3 && c.args[0] == "pending":
			return pendingCommits(c)
		case len(c.args) == 3 && c.args[0] == "prune":
			upTo, err := parseInt("UP_TO_T", c.args[2])
			if err != nil {
				return err
			}
			if err := c.ns.PruneCommitIndex(c.ctx, c.args[1], upTo); err != nil {
				return err
			}
			return c.done(fmt.Sprintf("pruned the commit index of %s up to t %d", c.args[1], upTo))
		}
		return usagef("usage: ns commits pending ID [SINCE_T] | prune ID UP_TO_T")
	}}
}

func pendingCommits(c *call) error {
	since := int64(0)
	if len(c.args) == 3 {
		var err error
		if since, err = parseInt("SINCE_T", c.args[2]); err != nil {
			return err
		}
	}
	entries, ok, err := c.ns.PendingCommitCIDs(c.ctx, c.args[1], since)
	if err != nil {
		return err
	}
	if c.json {
		out := map[string]any{"id": c.args[1], "since_t": since, "commits": entries}
		if !ok {
			out["commits"] = nil
		}
		return c.printJSON(out)
	}
	if !ok {
		fmt.Fprintf(c.stdout, "no usable commit index of %s above t %d: walk the commit chain\n", c.args[1], since)
		return nil
	}
	for _, e := range entries {
		fmt.Fprintf(c.stdout, "%d %s\n", e.T, e.CID)
	}
	return nil
}
