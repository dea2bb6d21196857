// Command ns-migrate copies a nameservice from one backend to another,
// typically a file nameservice into DynamoDB, through the portable API only.
//
//	ns-migrate --from URL|--from-config FILE --to URL|--to-config FILE [flags]
//
// Every selected record is created at the target when absent, skipped when
// identical, advanced when the target is behind (by the compare-and-set
// rules a live writer follows, so a writer at the target is never
// overwritten), and reported as a conflict when the target is ahead or has
// diverged. docs/migrate.md is the runbook.
//
// Exit codes: 0 everything done (and verified, with --verify); 1 a record
// failed, conflicted or differs, or the run was interrupted; 2 usage.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"go.opentelemetry.io/otel/trace"

	"nameservice.dev/nameservice"
	_ "nameservice.dev/nameservice/drivers/all"
	"nameservice.dev/nameservice/guard"
	"nameservice.dev/nameservice/internal/buildinfo"
	"nameservice.dev/nameservice/internal/cli"
)

// Exit codes.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

func main() { cli.Main(run) }

var usagef = cli.Usagef

// options are the parsed command line.
type options struct {
	from, fromConfig string
	to, toConfig     string
	sel              selector
	dryRun           bool
	verify           bool
	verifyOnly       bool
	createTable      bool
	parallel         int
	report, resume   string
	progressEvery    time.Duration
	version          bool
	otlpEndpoint     string
	tracer           trace.Tracer // a span per record; nil: none
}

const usageText = `usage: ns-migrate --from URL|--from-config FILE --to URL|--to-config FILE [flags]

Copies every record (ledgers and graph sources, retracted ones included)
from one nameservice to another: create when absent, skip when identical,
advance when the target is behind, conflict when it is ahead or diverged.

`

// maxParallel bounds --parallel: each is a worker with up to two records
// buffered, and a million of them exhausted the memory.
const maxParallel = 1024

// parseFlags parses the command line. For --help it prints the usage and
// the flags to stdout and returns flag.ErrHelp.
func parseFlags(args []string, stdout io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("ns-migrate", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are returned, and printed once by run
	fs.StringVar(&o.from, "from", "", "source nameservice URL (file:///dir, dynamodb://table, mem://name, ...)")
	fs.StringVar(&o.fromConfig, "from-config", "", "source as a Fluree JSON-LD connection config `file`")
	fs.StringVar(&o.to, "to", "", "target nameservice URL")
	fs.StringVar(&o.toConfig, "to-config", "", "target as a Fluree JSON-LD connection config `file`")
	fs.Func("id", "migrate this record `ID` (repeatable)", func(s string) error {
		o.sel.ids = append(o.sel.ids, s)
		return nil
	})
	fs.StringVar(&o.sel.idsFrom, "ids-from", "", "migrate the IDs listed in `file`, one a line")
	fs.StringVar(&o.sel.prefix, "prefix", "", "only IDs (name:branch) starting with `P`")
	kind := fs.String("kind", "", "only records of this `kind`: ledger or graph_source")
	fs.BoolVar(&o.sel.skipRetracted, "skip-retracted", false, "leave retracted records out")
	fs.BoolVar(&o.dryRun, "dry-run", false, "print the plan (action per record and counts); write nothing")
	fs.BoolVar(&o.verify, "verify", false, "after copying, compare every record at both sides; a difference exits 1")
	fs.BoolVar(&o.verifyOnly, "verify-only", false, "only compare the two sides; write nothing")
	fs.BoolVar(&o.createTable, "create-table", false, "create the target's table when it does not exist (DynamoDB)")
	fs.IntVar(&o.parallel, "parallel", 4, "records migrated at once")
	fs.IntVar(&o.sel.pageSize, "page-size", 1000, "records per source listing page (a file source re-reads its directory tree per page)")
	fs.StringVar(&o.report, "report", "", "write one JSON line per record to `file` (id, action, result, error)")
	fs.StringVar(&o.resume, "resume", "", "skip the records a previous report `file` shows done")
	fs.DurationVar(&o.progressEvery, "progress-every", 10*time.Second, "interval of the progress lines when not on a terminal")
	fs.BoolVar(&o.version, "version", false, "print the version, commit and Go version, and exit")
	fs.StringVar(&o.otlpEndpoint, "otlp-endpoint", "", "export traces and metrics over OTLP/HTTP to this `URL` (default: $OTEL_EXPORTER_OTLP_ENDPOINT; none)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usageText)
			fs.VisitAll(func(f *flag.Flag) { fmt.Fprint(stdout, cli.FlagLine(f)) })
			return nil, err
		}
		return nil, cli.UsageError{Msg: cli.FlagError(err)}
	}
	if fs.NArg() > 0 {
		return nil, usagef("unexpected argument %q", fs.Arg(0))
	}
	if o.version {
		return o, nil
	}
	o.sel.kind = nameservice.Kind(*kind)
	return o, o.check()
}

func (o *options) check() error {
	switch {
	case (o.from == "") == (o.fromConfig == ""):
		return usagef("give exactly one of --from and --from-config")
	case (o.to == "") == (o.toConfig == ""):
		return usagef("give exactly one of --to and --to-config")
	case o.from != "" && o.from == o.to, o.fromConfig != "" && o.fromConfig == o.toConfig:
		return usagef("--from and --to name the same nameservice")
	case o.sel.kind != "" && !o.sel.kind.Valid():
		return usagef("--kind %q: want ledger or graph_source", o.sel.kind)
	case o.parallel < 1 || o.parallel > maxParallel:
		return usagef("--parallel %d: want 1 to %d", o.parallel, maxParallel)
	case o.sel.pageSize < 1 || o.sel.pageSize > guard.MaxPageSize:
		return usagef("--page-size %d: want 1 to %d", o.sel.pageSize, guard.MaxPageSize)
	case o.verifyOnly && (o.dryRun || o.verify || o.createTable):
		return usagef("--verify-only writes nothing: it does not combine with --dry-run, --verify or --create-table")
	case o.dryRun && o.verify:
		return usagef("--dry-run writes nothing, so there is nothing to --verify (use --verify-only)")
	case o.progressEvery <= 0:
		return usagef("--progress-every %s: want a positive duration", o.progressEvery)
	}
	return o.sel.checkIDs()
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stdout)
	ok := true
	if err == nil && !o.version {
		ok, err = migrate(ctx, o, stdout, stderr)
	}
	switch {
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case err != nil:
		fmt.Fprintln(stderr, "ns-migrate:", err)
		if cli.IsUsage(err) {
			return exitUsage
		}
		return exitFail
	case o.version:
		fmt.Fprintf(stdout, "ns-migrate %s\n", buildinfo.Read())
	case !ok:
		return exitFail
	}
	return exitOK
}
