// Command ns is the operator CLI of the nameservice.
//
//	ns [--url URL | --config FILE] [--json] COMMAND [ARGS]
//
// The URL comes from --url, else $NAMESERVICE_URL, else the embedded default
// file://./.nameservice; --config takes a Fluree JSON-LD connection config
// instead. Run "ns help" for the commands.
//
// Exit codes: 0 done; 3 not applied (stale or conflict); 4 not found; 5
// already exists; 6 the table or bucket does not exist; 7 permission
// denied; 2 usage, invalid ID or invalid argument (a T below 1, a payload
// over a limit); 1 anything else, also a record that could not be read or
// printed. Errors go to stderr, one line each.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"nameservice.dev/nameservice"
)

// Exit codes.
const (
	exitOK               = 0
	exitError            = 1
	exitUsage            = 2
	exitNotApplied       = 3
	exitNotFound         = 4
	exitExists           = 5
	exitNotProvisioned   = 6 // the table or bucket does not exist: `ns table create`
	exitPermissionDenied = 7 // the backend refused the credentials or permission
)

// DefaultURL is used when neither --url, --config nor $NAMESERVICE_URL is given.
const DefaultURL = "file://./.nameservice"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// errUsage marks a usage error; its message is printed with the command's
// usage line.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// errNotApplied is returned by a push that was not applied, after its
// outcome is printed.
var errNotApplied = errors.New("not applied")

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := dispatch(ctx, args, stdout, stderr)
	if err == nil {
		return exitOK
	}
	code := exitCode(err)
	if code != exitNotApplied {
		fmt.Fprintln(stderr, "ns:", err)
	}
	return code
}

func exitCode(err error) int {
	var ue usageError
	switch {
	case errors.As(err, &ue), errors.Is(err, nameservice.ErrInvalidID), errors.Is(err, nameservice.ErrInvalidArgument):
		return exitUsage
	case errors.Is(err, errNotApplied):
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
