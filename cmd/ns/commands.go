package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/connconfig"
	_ "nameservice.dev/nameservice/drivers/all"
	"nameservice.dev/nameservice/guard"
	cmdline "nameservice.dev/nameservice/internal/cli"
	"nameservice.dev/nameservice/internal/otelexport"
	"nameservice.dev/nameservice/internal/text"
)

// command is one command (or one subcommand of a group such as branch): its
// usage, its flags and what it does.
type command struct {
	usage   string
	summary string // one line: what it does
	// example is one command line that uses it, shown by its help; every
	// example parses (TestHelpExamplesParse).
	example string
	// subs, when set, make the command a group (ns branch create|list|drop):
	// it runs none of its own, and the other fields but summary are unused.
	subs  map[string]*command
	flags func(fs *flag.FlagSet) // registers the command's own flags
	nargs int                    // exact number of positional arguments; -1: any
	// ownsConfig: after the command name --config is the command's own flag
	// (create-graph-source's JSON config); the connection config file must
	// then come before the command.
	ownsConfig bool
	// local: the command needs no nameservice (version, completion).
	local bool
	// creates: the command may create the store's first record, so a file
	// store whose directory does not exist is no mistake for it (see
	// cmdline.MissingStore).
	creates bool
	// ids: its positional arguments are record IDs (for completion).
	ids bool
	// hidden: left out of help and completion (the completion's helper).
	hidden bool
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
	json   bool
	stdout io.Writer
	stderr io.Writer
}

var commands = map[string]*command{}

// invocation is a command line parsed: the command, its call (without a
// nameservice yet) and the connection it names.
type invocation struct {
	cmd      *command
	c        *call
	url, cfg string
	emptyURL bool // --url was given empty
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	inv, err := parseLine(args, stdout, stderr)
	if inv == nil || err != nil {
		return err
	}
	inv.c.ctx = ctx
	cmd, c := inv.cmd, inv.c
	if cmd.local {
		return cmd.run(c)
	}
	if inv.emptyURL {
		return usagef("--url is empty; give a nameservice URL, or leave --url out for $NAMESERVICE_URL or %s", DefaultURL)
	}
	if cmd.otlpEndpoint != nil {
		ex, err := otelexport.Start(ctx, *cmd.otlpEndpoint, "ns")
		if err != nil {
			return usagef("%v", err)
		}
		defer ex.Shutdown(stderr, "ns")
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
	ns, err := openNS(ctx, inv.url, inv.cfg, opts...)
	if err != nil {
		return err
	}
	defer ns.Close()
	if !cmd.creates {
		if err := cmdline.MissingStore(ns, "check the URL; ns init creates it"); err != nil {
			return err
		}
	}
	c.ns = ns
	return cmd.run(c)
}

// parseLine parses a command line: global flags, the command, its flags
// and arguments. It serves help itself (and returns a nil invocation), and
// returns a usage error for anything malformed.
func parseLine(args []string, stdout, stderr io.Writer) (*invocation, error) {
	// Global flags may come before the command.
	var url, cfg string
	var asJSON bool
	g := newFlagSet(&command{}, &url, &cfg, &asJSON)
	err := g.Parse(args)
	switch {
	case err == flag.ErrHelp:
		fmt.Fprint(stdout, helpText())
		return nil, nil
	case err != nil:
		return nil, usagef("%s; run ns help", cmdline.FlagError(err))
	case g.NArg() == 0:
		fmt.Fprint(stderr, helpText())
		return nil, usagef("no command given")
	case g.Arg(0) == "help":
		return nil, help(stdout, g.Args()[1:])
	}
	name, cmd, rest, err := resolve(g.Args())
	if err != nil {
		return nil, err
	}
	fs := newFlagSet(cmd, &url, &cfg, &asJSON)
	pos, err := parseInterleaved(fs, rest)
	if errors.Is(err, flag.ErrHelp) {
		printCommandHelp(stdout, name, cmd)
		return nil, nil
	}
	if err != nil {
		return nil, usagef("%s: %s (usage: ns %s %s)", name, cmdline.FlagError(err), name, cmd.usage)
	}
	if cmd.nargs >= 0 && len(pos) != cmd.nargs {
		return nil, usagef("%s takes %d argument(s), got %d (usage: ns %s %s)", name, cmd.nargs, len(pos), name, cmd.usage)
	}
	return &invocation{cmd: cmd, url: url, cfg: cfg, emptyURL: url == "" && (isSet(g, "url") || isSet(fs, "url")),
		c: &call{args: pos, json: asJSON, stdout: stdout, stderr: stderr}}, nil
}

// newFlagSet returns the flags of cmd: its own and the global ones, which
// parse into url, cfg and asJSON (their values the defaults).
func newFlagSet(cmd *command, url, cfg *string, asJSON *bool) *flag.FlagSet {
	fs := flag.NewFlagSet("ns", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(url, "url", *url, "nameservice `URL` (default $NAMESERVICE_URL, else "+DefaultURL+")")
	if !cmd.ownsConfig {
		fs.StringVar(cfg, "config", *cfg, "Fluree JSON-LD connection config `FILE`, instead of --url")
	}
	fs.BoolVar(asJSON, "json", *asJSON, "print JSON")
	if cmd.flags != nil {
		cmd.flags(fs)
	}
	return fs
}

// resolve finds the command args start with: a command, or a group's
// subcommand (branch create). It returns its full name and the arguments
// after it.
func resolve(args []string) (string, *command, []string, error) {
	name, rest := args[0], args[1:]
	cmd := commands[name]
	if cmd == nil {
		return "", nil, nil, usagef("unknown command %q; run ns help", text.Clip(name, 40))
	}
	if cmd.subs == nil {
		return name, cmd, rest, nil
	}
	if len(rest) == 0 || strings.HasPrefix(rest[0], "-") {
		return "", nil, nil, usagef("%s needs a subcommand: %s; run ns help %s", name, strings.Join(subNames(cmd), ", "), name)
	}
	sub := cmd.subs[rest[0]]
	if sub == nil {
		return "", nil, nil, usagef("unknown subcommand %q of %s (want %s); run ns help %s", text.Clip(rest[0], 40), name, strings.Join(subNames(cmd), ", "), name)
	}
	return name + " " + rest[0], sub, rest[1:], nil
}

func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
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
	}
	return nameservice.Open(ctx, cmp.Or(url, os.Getenv("NAMESERVICE_URL"), DefaultURL), opts...)
}

// printOutcome prints a push's outcome and returns errNotApplied when it was
// not applied; a push that failed with err prints nothing and returns err.
func (c *call) printOutcome(out nameservice.Outcome, err error) error {
	switch {
	case err != nil:
		return err
	case c.json:
		if err := c.printJSON(map[string]any{"applied": out.Applied, "current": out.Current}); err != nil {
			return err
		}
	case out.Applied:
		fmt.Fprintf(c.stdout, "applied: %v\n", out.Current)
	default:
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
		err = fmt.Errorf("cannot print: %w", err)
	}
	fmt.Fprintf(c.stdout, "%s\n", b)
	return err
}

// output prints v as JSON with --json, else one line of format and args.
func (c *call) output(v any, format string, args ...any) error {
	if c.json {
		return c.printJSON(v)
	}
	fmt.Fprintf(c.stdout, format+"\n", args...)
	return nil
}

func (c *call) done(msg string) error { return c.output(map[string]any{"ok": true}, "%s", msg) }

func parseInt(what, s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if errors.Is(err, strconv.ErrRange) {
		return 0, usagef("%s %s is out of range: at most %d", what, text.Clip(s, 40), int64(guard.MaxWatermark))
	}
	if err != nil {
		return 0, usagef("%s %q is not an integer", what, text.Clip(s, 40))
	}
	return n, nil
}

// parseT parses a T argument: an integer from 1 to guard.MaxWatermark.
func parseT(s string) (int64, error) {
	t, err := parseInt("T", s)
	switch {
	case err != nil:
		return 0, err
	case t < 1:
		return 0, usagef("T %d: t starts at 1", t)
	case t > guard.MaxWatermark:
		return 0, usagef("T %d is out of range: at most %d", t, int64(guard.MaxWatermark))
	}
	return t, nil
}

// stdin is what a payload argument of "@-" reads.
var stdin io.Reader = os.Stdin

// maxPayloadFile bounds what a payload argument reads from a file or
// stdin: far above any payload a record may hold.
const maxPayloadFile = 16 << 20

// payloadText returns the text of a JSON payload argument: s itself, or
// with "@FILE" the file's content, with "@-" standard input's (no JSON
// value starts with '@').
func payloadText(what, s string) ([]byte, error) {
	name, ok := strings.CutPrefix(s, "@")
	if !ok {
		return []byte(s), nil
	}
	var r io.Reader = stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, usagef("%s: %v", what, err)
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, maxPayloadFile+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: read %s: %w", what, s, err)
	case len(b) > maxPayloadFile:
		return nil, usagef("%s: %s holds over %d bytes", what, s, maxPayloadFile)
	}
	return b, nil
}

// parseObject parses a JSON object argument (see payloadText).
func parseObject(what, s string) (nameservice.Object, error) {
	b, err := payloadText(what, s)
	if err != nil {
		return nil, err
	}
	o, err := nameservice.ParseObject(b)
	if err != nil {
		return nil, usagef("%s: %v", what, err)
	}
	if o == nil {
		return nil, usagef("%s is null, not a JSON object", what)
	}
	return o, nil
}
