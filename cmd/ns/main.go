// Command ns is the operator CLI of the nameservice.
//
//	ns [--url URL | --config FILE] [--json] COMMAND [ARGS]
//
// The URL comes from --url, else $NAMESERVICE_URL, else the embedded default
// file://./.nameservice; --config takes a Fluree JSON-LD connection config
// instead. Run "ns help" for the commands.
//
// Exit codes: 0 done; 3 not applied (stale or conflict) or refused (a
// drop of a branch that has branches); 4 not found; 5 already exists; 6
// the table, bucket or directory does not exist; 7 permission denied; 2 usage,
// invalid ID or invalid argument (a T below 1, a payload over a limit); 1
// anything else, also a record that could not be read or printed. Errors
// go to stderr, one line each.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"nameservice.dev/nameservice"
	cmdline "nameservice.dev/nameservice/internal/cli"
)

// Exit codes.
const (
	exitOK               = 0
	exitError            = 1
	exitUsage            = 2
	exitNotApplied       = 3 // also a drop refused while branches exist
	exitNotFound         = 4
	exitExists           = 5
	exitNotProvisioned   = 6 // the table or bucket does not exist: `ns table create`
	exitPermissionDenied = 7 // the backend refused the credentials or permission
)

// DefaultURL is used when neither --url, --config nor $NAMESERVICE_URL is given.
const DefaultURL = "file://./.nameservice"

func main() { cmdline.Main(run) }

var usagef = cmdline.Usagef

// errNotApplied is returned by a push that was not applied, after its
// outcome is printed.
var errNotApplied = errors.New("not applied")

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := dispatch(ctx, args, stdout, stderr)
	if err == nil {
		return exitOK
	}
	// A not applied outcome is printed already; a run canceled because its
	// reader closed the pipe (ns list | head -1) ends quietly.
	quiet := errors.Is(err, errNotApplied) ||
		(errors.Is(context.Cause(ctx), cmdline.ErrStdoutClosed) && errors.Is(err, context.Canceled))
	if !quiet {
		fmt.Fprintln(stderr, "ns:", err)
	}
	return exitCode(err)
}

func exitCode(err error) int {
	switch {
	case cmdline.IsUsage(err), errors.Is(err, nameservice.ErrInvalidID), errors.Is(err, nameservice.ErrInvalidArgument):
		return exitUsage
	case errors.Is(err, errNotApplied), errors.Is(err, nameservice.ErrHasBranches):
		return exitNotApplied
	case errors.Is(err, nameservice.ErrNotFound):
		return exitNotFound
	case errors.Is(err, nameservice.ErrAlreadyExists):
		return exitExists
	case errors.Is(err, nameservice.ErrNotProvisioned):
		return exitNotProvisioned
	case errors.Is(err, nameservice.ErrPermissionDenied):
		return exitPermissionDenied
	}
	return exitError
}
