package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"iter"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"nameservice.dev/nameservice"
	cmdline "nameservice.dev/nameservice/internal/cli"
)

func init() {
	commands["lookup"] = &command{usage: "ID", nargs: 1, ids: true,
		summary: "print record ID: every concern, its meta and branches",
		example: "ns lookup mydb",
		run: func(c *call) error {
			rec, err := c.ns.Lookup(c.ctx, c.args[0])
			if err != nil {
				return err
			}
			switch {
			case c.human():
				return printRecord(c.stdout, rec)
			case c.json:
				return c.printJSON(rec)
			}
			b, err := json.MarshalIndent(rec, "", "  ")
			if err != nil {
				return c.printJSON(rec) // prints the error record and fails
			}
			fmt.Fprintf(c.stdout, "%s\n", b)
			return nil
		}}
	commands["list"] = listCommand()
	commands["heads"] = &command{usage: "ID", nargs: 1, ids: true,
		summary: "print ledger ID's head and index pointers, read together in one request where the backend allows",
		example: "ns heads mydb",
		run: func(c *call) error {
			h, err := c.ns.Heads(c.ctx, c.args[0])
			if err != nil {
				return err
			}
			if !c.human() {
				return c.printJSON(map[string]nameservice.Value{"head": h.Head, "index": h.Index})
			}
			for _, p := range []struct {
				c nameservice.Concern
				v nameservice.Value
			}{{nameservice.Head, h.Head}, {nameservice.Index, h.Index}} {
				s, err := describe(p.c, p.v)
				if err != nil {
					return fmt.Errorf("%s: %s cannot be printed: %w", c.args[0], p.c, err)
				}
				fmt.Fprintf(c.stdout, "%-6s %s\n", p.c, s)
			}
			return nil
		}}
}

// outputEnv forces the output form: "human" (a table or readable record, as
// on a terminal) or "json" (as when piped). Tests and scripts set it.
const outputEnv = "NS_OUTPUT"

// human reports whether output is for a person: not with --json; else as
// $NS_OUTPUT says; else when stdout is a terminal.
func (c *call) human() bool {
	if c.json {
		return false
	}
	switch os.Getenv(outputEnv) {
	case "human":
		return true
	case "json":
		return false
	}
	return cmdline.IsTerminal(c.stdout)
}

func listCommand() *command {
	var kind, prefix, state, sourceType string
	var retracted bool
	var pageSize int
	return &command{usage: "[--kind ledger|graph_source] [--prefix P] [--state S] [--source-type T] [--retracted] [--page-size N]", nargs: 0,
		summary: "print every record: a table on a terminal, JSON lines when piped",
		example: "ns list --kind ledger --prefix tenant-eu/",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&kind, "kind", "", "ledger or graph_source")
			fs.StringVar(&prefix, "prefix", "", "only IDs starting with P")
			fs.StringVar(&state, "state", "", "only records whose status state is S (e.g. error, indexing)")
			fs.StringVar(&sourceType, "source-type", "", "only graph sources of type T (e.g. db:Bm25Index)")
			fs.BoolVar(&retracted, "retracted", false, "include retracted records")
			fs.IntVar(&pageSize, "page-size", 0, "records per backend page (default: the driver's)")
		},
		run: func(c *call) error {
			opts := nameservice.ListOptions{Kind: nameservice.Kind(kind), Prefix: prefix, IncludeRetracted: retracted, PageSize: pageSize,
				State: state, SourceType: sourceType}
			if kind != "" && !opts.Kind.Valid() {
				return usagef("--kind %q is neither ledger nor graph_source", kind)
			}
			if pageSize < 0 {
				return usagef("--page-size %d is negative (0 is the driver's default)", pageSize)
			}
			return printRecords(c, "list", "ID\tKIND\tCOMMIT_T\tINDEX_T\tSTATUS\tRETRACTED", c.ns.List(c.ctx, opts), tableRow)
		}}
}

// printRecords prints the records recs yields: a table with header and a
// row of each for a person, else JSON lines. It names each record that
// could not be read or printed on stderr and goes on, and fails at the end
// (saying what, the command) when there was any.
func printRecords(c *call, what, header string, recs iter.Seq2[*nameservice.Record, error], row func(*nameservice.Record) string) error {
	var table *tabwriter.Writer
	if c.human() {
		table = newTable(c.stdout)
	}
	// The header goes out with the first row, or at the end of a listing
	// that did not fail: a listing refused at once prints no header.
	headed := false
	head := func() {
		if table != nil && !headed {
			fmt.Fprintln(table, header)
			headed = true
		}
	}
	bad := 0
	for rec, err := range recs {
		_, unreadable := errors.AsType[*nameservice.RecordError](err)
		switch {
		case unreadable:
			bad++
			fmt.Fprintln(c.stderr, "ns:", err)
			continue
		case err != nil:
			if table != nil {
				table.Flush()
			}
			return err
		}
		if table != nil {
			head()
			fmt.Fprintln(table, row(rec))
		} else if err := c.printJSON(rec); err != nil {
			bad++
			fmt.Fprintf(c.stderr, "ns: %s: %v\n", rec.ID, err)
		}
	}
	if table != nil {
		head()
		table.Flush()
	}
	if bad > 0 {
		return fmt.Errorf("%s: %d record(s) could not be read or printed (named above)", what, bad)
	}
	return nil
}

func tableRow(r *nameservice.Record) string {
	t := func(v *nameservice.Value) string {
		if v == nil {
			return "-"
		}
		return strconv.FormatInt(v.V, 10)
	}
	status := "-"
	if r.Status != nil {
		status = fmt.Sprintf("%s (v%d)", oneLine(r.Status.State()), r.Status.V)
	}
	return strings.Join([]string{oneLine(r.ID.String()), string(r.Kind), t(r.Head), t(r.Index), status, strconv.FormatBool(r.Retracted)}, "\t")
}

// oneLine quotes s when it holds anything that would break a table row.
func oneLine(s string) string {
	if strings.ContainsAny(s, "\t\n\r") {
		return strconv.Quote(s)
	}
	return s
}

// printRecord prints rec for a person: one field per line.
func printRecord(w io.Writer, rec *nameservice.Record) error {
	tw := newTable(w)
	line := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	line("id", rec.ID.String())
	line("kind", string(rec.Kind))
	if rec.Kind == nameservice.GraphSource {
		line("source type", rec.SourceType)
		line("dependencies", strings.Join(rec.Dependencies, ", "))
	}
	line("retracted", strconv.FormatBool(rec.Retracted))
	if rec.CreatedAt != 0 {
		line("created", time.Unix(rec.CreatedAt, 0).UTC().Format(time.RFC3339))
	}
	for _, cn := range []nameservice.Concern{nameservice.Head, nameservice.Index, nameservice.Status, nameservice.Config} {
		v := rec.Value(cn)
		if v == nil {
			continue
		}
		s, err := describe(cn, *v)
		if err != nil {
			tw.Flush()
			return fmt.Errorf("%s: %s cannot be printed: %w", rec.ID, cn, err)
		}
		line(cn.String(), s)
	}
	if rec.SourceBranch != "" {
		line("source branch", rec.SourceBranch)
	}
	if bp := rec.BranchPoint; bp != nil {
		line("branch point", fmt.Sprintf("commit_t %d  %s", bp.T, oneLine(bp.Address)))
	}
	if rec.Branches != 0 {
		line("branches", strconv.FormatInt(rec.Branches, 10))
	}
	return tw.Flush()
}

// describe formats one concern: "commit_t 5  fluree:..." for a ref, the
// state and any other keys for a status, the JSON of a config.
func describe(c nameservice.Concern, v nameservice.Value) (string, error) {
	head := fmt.Sprintf("%s %d", c.Watermark(), v.V)
	if v.Unborn() {
		return head + "  (unborn)", nil
	}
	if ref, ok := v.Ref(); ok && (c == nameservice.Head || c == nameservice.Index) {
		return head + "  " + oneLine(ref.Address), nil
	}
	p := v.Payload
	if c == nameservice.Status {
		head += "  " + oneLine(v.State())
		p = p.Clone()
		delete(p, "state")
		if len(p) == 0 {
			return head, nil
		}
	}
	b, err := p.MarshalJSON()
	if err != nil {
		return "", err
	}
	return head + "  " + string(b), nil
}
