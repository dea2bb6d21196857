package main

import (
	"cmp"
	"flag"
	"strconv"
	"strings"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/model"
)

func init() {
	commands["branch"] = &command{summary: "create, list and drop a ledger's branches, as Fluree's", subs: map[string]*command{
		"create": branchCreateCommand(),
		"list": {usage: "NAME", nargs: 1,
			summary: "list the branches of ledger NAME: branch, source, commit_t, branches, retracted",
			example: "ns branch list mydb",
			run: func(c *call) error {
				return printRecords(c, "branch list", "BRANCH\tSOURCE\tCOMMIT_T\tBRANCHES\tRETRACTED", c.ns.ListBranches(c.ctx, c.args[0]), branchRow)
			}},
		"drop": branchDropCommand(),
	}}
	commands["reset-head"] = resetHeadCommand()
}

func branchCreateCommand() *command {
	var from, at string
	return &command{usage: "ID [--from SOURCE] [--at ADDRESS@T]", nargs: 1, ids: true,
		summary: "create branch ID from its source's head (main unless --from), or at the commit --at",
		example: "ns branch create mydb:dev --from main",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&from, "from", "", "the source branch (default main)")
			fs.StringVar(&at, "at", "", "start at this commit, ADDRESS@T, instead of the source head")
		},
		run: func(c *call) error {
			opts := nameservice.BranchOptions{From: from}
			if at != "" {
				ref, err := parseRefArg("--at", at)
				if err != nil {
					return err
				}
				opts.At = &ref
			}
			rec, err := c.ns.CreateBranch(c.ctx, c.args[0], opts)
			if err != nil {
				return err
			}
			return c.output(rec, "created %s from %s at commit_t %d", rec.ID, rec.SourceBranch, rec.Head.V)
		}}
}

// branchDropCommand drops a branch. Dropping a ledger's main removes the
// ledger's head with it, so it asks for --yes.
func branchDropCommand() *command {
	var yes bool
	return &command{usage: "ID [--yes]", nargs: 1, ids: true,
		summary: "drop branch ID and uncount it in its source (refused while branches of it exist; main needs --yes)",
		example: "ns branch drop mydb:dev",
		flags: func(fs *flag.FlagSet) {
			fs.BoolVar(&yes, "yes", false, "drop even a ledger's main branch, with its head")
		},
		run: func(c *call) error {
			id, err := nameservice.ParseID(c.args[0])
			if err != nil {
				return err
			}
			if id.Branch == model.DefaultBranch && !yes {
				return usagef("branch drop %s: %s is the ledger's main branch: dropping it removes the ledger and its head; give --yes to drop it (ns retract %s hides it instead)", id, id, id.Name)
			}
			if err := c.ns.DropBranch(c.ctx, id.String()); err != nil {
				return err
			}
			return c.done("dropped " + id.String())
		}}
}

// parseRefArg parses ADDRESS@T (the last '@' separates them, so an address
// may hold '@').
func parseRefArg(flagName, s string) (nameservice.Ref, error) {
	i := strings.LastIndexByte(s, '@')
	if i <= 0 {
		return nameservice.Ref{}, usagef("%s %q: want ADDRESS@T", flagName, s)
	}
	t, err := parseT(s[i+1:])
	if err != nil {
		return nameservice.Ref{}, usagef("%s: %v", flagName, err)
	}
	return nameservice.Ref{Address: s[:i], T: t}, nil
}

func branchRow(rec *nameservice.Record) string {
	src := cmp.Or(rec.SourceBranch, "-")
	return strings.Join([]string{oneLine(rec.ID.Branch), oneLine(src), strconv.FormatInt(rec.Head.V, 10),
		strconv.FormatInt(rec.Branches, 10), strconv.FormatBool(rec.Retracted)}, "\t")
}

// resetHeadCommand is `ns reset-head ID --commit ADDRESS@T [--index
// ADDRESS@T | --no-index]`.
func resetHeadCommand() *command {
	var commit, index string
	var noIndex bool
	return &command{usage: "ID --commit ADDRESS@T [--index ADDRESS@T | --no-index]", nargs: 1, ids: true,
		summary: "set the head (and index) of ID whatever the watermarks: moves a head back (admin)",
		example: "ns reset-head mydb:dev --commit fluree:s3://b/commits/t38.json@38 --no-index",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&commit, "commit", "", "the commit head to set, ADDRESS@T")
			fs.StringVar(&index, "index", "", "the index head to set as well, ADDRESS@T")
			fs.BoolVar(&noIndex, "no-index", false, "set the index unborn")
		},
		run: func(c *call) error {
			if commit == "" {
				return usagef("reset-head needs --commit ADDRESS@T")
			}
			if index != "" && noIndex {
				return usagef("give --index or --no-index, not both")
			}
			head, err := parseRefArg("--commit", commit)
			if err != nil {
				return err
			}
			opts := nameservice.ResetOptions{ClearIndex: noIndex}
			if index != "" {
				ix, err := parseRefArg("--index", index)
				if err != nil {
					return err
				}
				opts.Index = &ix
			}
			prev, err := c.ns.ResetHead(c.ctx, c.args[0], head, opts)
			if err != nil {
				return err
			}
			return c.output(map[string]any{"id": prev.ID.String(), "previous": prev},
				"reset %s: head was %v, index was %v", prev.ID, *prev.Head, *prev.Index)
		}}
}
