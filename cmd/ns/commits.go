package main

import "fmt"

// ns commits reads and prunes Fluree's commit index of a ledger (DynamoDB
// and file backends): pending prints the entries above a t, one "t cid"
// line each, as Fluree's indexer reads them; prune removes those up to a t.
func init() {
	commands["commits"] = &command{summary: "read and prune Fluree's commit index of a ledger (DynamoDB and files)", subs: map[string]*command{
		"pending": {usage: "ID [SINCE_T]", nargs: -1, ids: true,
			summary: "print the commit index entries of ID above SINCE_T (default 0), one \"t cid\" line each, as Fluree's indexer reads them",
			example: "ns commits pending mydb 40",
			run:     pendingCommits},
		"prune": {usage: "ID UP_TO_T", nargs: 2, ids: true,
			summary: "remove the commit index entries of ID up to t UP_TO_T, as Fluree's indexer does once it indexed them",
			example: "ns commits prune mydb 40",
			run: func(c *call) error {
				upTo, err := parseInt("UP_TO_T", c.args[1])
				if err != nil {
					return err
				}
				if err := c.ns.PruneCommitIndex(c.ctx, c.args[0], upTo); err != nil {
					return err
				}
				return c.done(fmt.Sprintf("pruned the commit index of %s up to t %d", c.args[0], upTo))
			}},
	}}
}

func pendingCommits(c *call) error {
	if len(c.args) < 1 || len(c.args) > 2 {
		return usagef("usage: ns commits pending ID [SINCE_T]")
	}
	since := int64(0)
	if len(c.args) == 2 {
		var err error
		if since, err = parseInt("SINCE_T", c.args[1]); err != nil {
			return err
		}
	}
	entries, ok, err := c.ns.PendingCommitCIDs(c.ctx, c.args[0], since)
	if err != nil {
		return err
	}
	if c.json {
		out := map[string]any{"id": c.args[0], "since_t": since, "commits": entries}
		if !ok {
			out["commits"] = nil
		}
		return c.printJSON(out)
	}
	if !ok {
		fmt.Fprintf(c.stdout, "no usable commit index of %s above t %d: walk the commit chain\n", c.args[0], since)
		return nil
	}
	for _, e := range entries {
		fmt.Fprintf(c.stdout, "%d %s\n", e.T, e.CID)
	}
	return nil
}
