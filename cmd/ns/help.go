package main

import (
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	cmdline "nameservice.dev/nameservice/internal/cli"
)

// newTable returns a writer aligning tab-separated columns, as every table
// of ns is printed.
func newTable(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0) }

// exitCodesHelp is the exit codes, as README.md "Exit codes" lists them.
const exitCodesHelp = `exit codes:
  0  done
  1  anything else (also a record that could not be read or printed)
  2  usage, an invalid ID or argument (a T below 1 or too large, a payload over a limit)
  3  not applied (stale or conflict), or refused (a drop while branches of the record exist)
  4  not found
  5  already exists
  6  the table, bucket or directory does not exist (ns table create)
  7  permission denied (the error names the action to grant, or where the token comes from)
`

func helpText() string {
	var b strings.Builder
	b.WriteString("usage: ns [--url URL | --config FILE] [--json] COMMAND [ARGS]\n\n")
	b.WriteString("The URL defaults to $NAMESERVICE_URL, else " + DefaultURL + ".\n")
	b.WriteString("ns help COMMAND (or ns COMMAND --help) shows a command's flags and an example.\n\ncommands:\n")
	tw := newTable(&b)
	for _, e := range listCommands() {
		fmt.Fprintf(tw, "  %s\t%s\n", e.name, e.cmd.summary)
	}
	tw.Flush()
	b.WriteString("\n" + exitCodesHelp)
	b.WriteString("\noutput: a table or readable record on a terminal, JSON with --json or when piped ($" + outputEnv + "=human|json forces one)\n")
	return b.String()
}

// namedCommand is a command with its full name ("branch create").
type namedCommand struct {
	name string
	cmd  *command
}

// listCommands returns every command that runs, subcommands by their full
// name, sorted; hidden ones are left out.
func listCommands() []namedCommand {
	var out []namedCommand
	for name, cmd := range commands {
		switch {
		case cmd.hidden:
		case cmd.subs == nil:
			out = append(out, namedCommand{name, cmd})
		default:
			for sub, sc := range cmd.subs {
				out = append(out, namedCommand{name + " " + sub, sc})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

func subNames(cmd *command) []string {
	return slices.Sorted(maps.Keys(cmd.subs))
}

// help serves ns help [COMMAND [SUBCOMMAND]].
func help(w io.Writer, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(w, helpText())
		return nil
	}
	if cmd := commands[args[0]]; cmd != nil && cmd.subs != nil && len(args) == 1 {
		printGroupHelp(w, args[0], cmd)
		return nil
	}
	name, cmd, rest, err := resolve(args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("help %s takes no more words, got %q", name, rest[0])
	}
	printCommandHelp(w, name, cmd)
	return nil
}

// printGroupHelp prints the subcommands of a group.
func printGroupHelp(w io.Writer, name string, cmd *command) {
	fmt.Fprintf(w, "usage: ns %s %s ...\n\n%s\n\nsubcommands:\n", name, strings.Join(subNames(cmd), "|"), cmd.summary)
	tw := newTable(w)
	for _, sub := range subNames(cmd) {
		fmt.Fprintf(tw, "  ns %s %s %s\t%s\n", name, sub, cmd.subs[sub].usage, cmd.subs[sub].summary)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nns help %s SUBCOMMAND shows its flags and an example.\n", name)
}

// printCommandHelp prints a command's usage, what it does, an example, and
// every flag it takes: its own, then the global ones.
func printCommandHelp(w io.Writer, name string, cmd *command) {
	fmt.Fprintf(w, "usage: ns %s %s\n\n%s\n\nexample:\n  %s\n", name, cmd.usage, cmd.summary, cmd.example)
	global := map[string]bool{"url": true, "config": !cmd.ownsConfig, "json": true}
	var own, globals strings.Builder
	newFlagSet(cmd, new(string), new(string), new(bool)).VisitAll(func(f *flag.Flag) {
		if global[f.Name] {
			globals.WriteString(cmdline.FlagLine(f))
		} else {
			own.WriteString(cmdline.FlagLine(f))
		}
	})
	if own.Len() > 0 {
		fmt.Fprintf(w, "\nflags:\n%s", own.String())
	}
	fmt.Fprintf(w, "\nglobal flags (before or after the command):\n%s", globals.String())
}
