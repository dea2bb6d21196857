package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/connconfig"
	_ "nameservice.dev/nameservice/drivers/all"
	"nameservice.dev/nameservice/internal/otelexport"
	"nameservice.dev/nameservice/internal/text"
)

// command is one subcommand: its usage, its flags and what it does.
type command struct {
	usage string
	flags func(fs *flag.FlagSet) // registers the command's own flags
	nargs int                    // exact number of positional arguments; -1: any
	// ownsConfig: after the command name --config is the command's own flag
	// (create-graph-source's JSON config); the connection config file must
	// then come before the command.
	ownsConfig bool
	// local: the command needs no nameservice (version, completion).
	local bool
	// otlpEndpoint, when set, is the command's --otlp-endpoint flag: it
	// exports traces and metrics (internal/otelexport).
	otlpEndpoint *string
	// options, when set, are more options of the NameService the command
	// runs over, read once its flags are parsed.
	options func() ([]nameservice.Option, error)
	run     func(c *call) error
}

// call is one invocation of a command.
type call struct {
	ctx    context.Context
	ns     *nameservice.NameService
	otel   *otelexport.Exporter // nil when not exporting
	args   []string
	flags  *flag.FlagSet
	json   bool
	stdout io.Writer
	stderr io.Writer
}

var commands = map[string]*command{}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	// Global flags may come before the command.
	g := flag.NewFlagSet("ns", flag.ContinueOnError)
	g.SetOutput(io.Discard)
	url, cfg, asJSON := globalFlags(g)
	if err := g.Parse(args); err == flag.ErrHelp || g.Arg(0) == "help" || len(args) == 0 {
		fmt.Fprint(stdout, helpText())
		return nil
	} else if err != nil {
		return usagef("%v", err)
	}
	if g.NArg() == 0 {
		return usagef("no command given; run ns help")
	}
	name, rest := g.Arg(0), g.Args()[1:]
	cmd := commands[name]
	if cmd == nil {
		return usagef("unknown command %q; run ns help", text.Clip(name, 40))
	}
	fs := flag.NewFlagSet("ns "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(url, "url", *url, "nameservice URL (default $NAMESERVICE_URL, else file://./.nameservice)")
	if !cmd.ownsConfig {
		fs.StringVar(cfg, "config", *cfg, "Fluree JSON-LD connection config file, instead of --url")
	}
	fs.BoolVar(asJSON, "json", *asJSON, "print JSON")
	if cmd.flags != nil {
		cmd.flags(fs)
	}
	pos, err := parseInterleaved(fs, rest)
	if errors.Is(err, flag.ErrHelp) {
		printCommandHelp(stdout, name, cmd.usage, fs)
		return nil
	}
	if err != nil {
		return usagef("%s: %v (usage: ns %s %s)", name, err, name, cmd.usage)
	}
	if cmd.nargs >= 0 && len(pos) != cmd.nargs {
		return usagef("%s takes %d argument(s), got %d (usage: ns %s %s)", name, cmd.nargs, len(pos), name, cmd.usage)
	}
	c := &call{ctx: ctx, args: pos, flags: fs, json: *asJSON, stdout: stdout, stderr: stderr}
	if cmd.local {
		return cmd.run(c)
	}
	if *url == "" && (isSet(g, "url") || isSet(fs, "url")) {
		return usagef("--url is empty; give a nameservice URL, or leave --url out for $NAMESERVICE_URL or %s", DefaultURL)
	}
	if cmd.otlpEndpoint != nil {
		ex, err := otelexport.Start(ctx, *cmd.otlpEndpoint, "ns")
		if err != nil {
			return usagef("%v", err)
		}
		defer shutdownExport(ex, stderr)
		c.otel = ex
	}
	opts := c.otel.Options()
	if cmd.options != nil {
		more, err := cmd.options()
		if err != nil {
			return err
		}
		opts = append(opts, more...)
	}
	ns, err := openNS(ctx, *url, *cfg, opts...)
	if err != nil {
		return err
	}
	defer ns.Close()
	c.ns = ns
	return cmd.run(c)
}

// printCommandHelp prints a command's usage and every flag it takes, its
// own and the global ones, for --help.
func printCommandHelp(w io.Writer, name, usage string, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: ns %s %s\n\nflags:\n", name, usage)
	fs.VisitAll(func(f *flag.Flag) {
		arg, help := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if arg != "" {
			line += " " + arg
		}
		if help != "" {
			line += "\n    \t" + strings.ReplaceAll(help, "\n", "\n    \t")
		}
		if d := f.DefValue; d != "" && d != "false" && d != "0" && d != "[]" {
			line += fmt.Sprintf(" (default %s)", d)
		}
		fmt.Fprintln(w, line)
	})
}

// shutdownExport sends the spans and metrics still buffered, for at most
// 5 seconds: a collector that is down must not hold the command.
func shutdownExport(ex *otelexport.Exporter, stderr io.Writer) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := ex.Shutdown(ctx); err != nil {
		fmt.Fprintln(stderr, "ns: OpenTelemetry export:", err)
	}
}

func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func globalFlags(fs *flag.FlagSet) (url, cfg *string, asJSON *bool) {
	return fs.String("url", "", "nameservice URL"), fs.String("config", "", "Fluree connection config"), fs.Bool("json", false, "JSON output")
}

// parseInterleaved parses flags that may come before, between or after the
// positional arguments. A negative number ("-1") is a positional argument,
// not a flag, so that a bad T is refused as a T; "--" ends the flags.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for len(args) > 0 {
		a := args[0]
		switch {
		case a == "--":
			return append(pos, args[1:]...), nil
		case a == "-" || !strings.HasPrefix(a, "-") || isNumber(a):
			pos, args = append(pos, a), args[1:]
			continue
		}
		n := 1 // the flag, and its value when it takes one and has no "="
		name := strings.TrimLeft(a, "-")
		if f := fs.Lookup(name); f != nil && !strings.Contains(name, "=") && !isBoolFlag(f) {
			n = min(2, len(args))
		}
		if err := fs.Parse(args[:n]); err != nil {
			return nil, err
		}
		args = args[n:]
	}
	return pos, nil
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

func openNS(ctx context.Context, url, cfg string, opts ...nameservice.Option) (*nameservice.NameService, error) {
	switch {
	case url != "" && cfg != "":
		return nil, usagef("give --url or --config, not both")
	case cfg != "":
		return connconfig.Open(ctx, cfg, opts...)
	case url == "":
		url = os.Getenv("NAMESERVICE_URL")
	}
	if url == "" {
		url = DefaultURL
	}
	return nameservice.Open(ctx, url, opts...)
}

func helpText() string {
	var b strings.Builder
	b.WriteString("usage: ns [--url URL | --config FILE] [--json] COMMAND [ARGS]\n\n")
	b.WriteString("The URL defaults to $NAMESERVICE_URL, else " + DefaultURL + ".\n\ncommands:\n")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "  %s %s\n", n, commands[n].usage)
	}
	b.WriteString("\nexit codes: 0 done, 3 not applied or refused (a branch with branches), 4 not found, 5 already exists, 2 usage, invalid ID or argument, 1 other\n")
	b.WriteString("output: a table or readable record on a terminal, JSON with --json or when piped ($" + outputEnv + "=human|json forces one)\n")
	return b.String()
}

// printOutcome prints a push's outcome and returns errNotApplied when it was
// not applied.
func (c *call) printOutcome(out nameservice.Outcome) error {
	if c.json {
		if err := c.printJSON(map[string]any{"applied": out.Applied, "current": out.Current}); err != nil {
			return err
		}
	} else if out.Applied {
		fmt.Fprintf(c.stdout, "applied: %v\n", out.Current)
	} else {
		fmt.Fprintf(c.stdout, "not applied; current: %v\n", out.Current)
	}
	if !out.Applied {
		return errNotApplied
	}
	return nil
}

// printJSON prints v as one JSON line. When v cannot be encoded it prints
// {"error": ...} in its place and returns an error, so that the command
// exits non-zero.
func (c *call) printJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"error": err.Error()})
		fmt.Fprintf(c.stdout, "%s\n", b)
		return fmt.Errorf("cannot print: %w", err)
	}
	fmt.Fprintf(c.stdout, "%s\n", b)
	return nil
}

func (c *call) done(msg string) error {
	if c.json {
		return c.printJSON(map[string]any{"ok": true})
	} else {
		fmt.Fprintln(c.stdout, msg)
	}
	return nil
}

func parseInt(what, s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, usagef("%s %q is not an integer", what, text.Clip(s, 40))
	}
	return n, nil
}

// parseT parses a T argument: an integer from 1 up.
func parseT(s string) (int64, error) {
	t, err := parseInt("T", s)
	if err == nil && t < 1 {
		return 0, usagef("T %d: t starts at 1", t)
	}
	return t, err
}

func parseObject(what, s string) (nameservice.Object, error) {
	o, err := nameservice.ParseObject([]byte(s))
	if err != nil {
		return nil, usagef("%s: %v", what, err)
	}
	if o == nil {
		return nil, usagef("%s is null, not a JSON object", what)
	}
	return o, nil
}
