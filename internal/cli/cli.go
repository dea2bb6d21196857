// Package cli holds what the commands (ns, ns-migrate) share: how main runs
// and the usage error.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"

	"golang.org/x/term"

	"nameservice.dev/nameservice"
)

// ErrStdoutClosed is the cause (context.Cause) of the context of a run whose
// standard output was closed by its reader, as `ns check URL | head -1`
// does once it has its line.
var ErrStdoutClosed = errors.New("standard output closed")

// Main runs run with the program's arguments and standard streams, under a
// context canceled by the first SIGINT or SIGTERM (a second one kills the
// process at once), or by the first write to a closed standard output (with
// cause ErrStdoutClosed), and exits with the code run returns. So a run
// cleans up alike however it is interrupted: by a signal, or by the pipe it
// writes to closing, which would otherwise kill it with SIGPIPE.
func Main(run func(ctx context.Context, args []string, stdout, stderr io.Writer) int) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // a second Ctrl-C kills at once
	}()
	// Notified, SIGPIPE no longer kills the process: a write to the closed
	// pipe fails with EPIPE instead, which Stdout turns into a cancel.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	code := run(ctx, os.Args[1:], Stdout{File: os.Stdout, Closed: func() { cancel(ErrStdoutClosed) }}, os.Stderr)
	stop()
	os.Exit(code)
}

// Stdout is the standard output of a run: a write that fails because its
// reader closed the pipe (EPIPE) calls Closed.
type Stdout struct {
	*os.File
	Closed func()
}

func (s Stdout) Write(b []byte) (int, error) {
	n, err := s.File.Write(b)
	if errors.Is(err, syscall.EPIPE) {
		s.Closed()
	}
	return n, err
}

// IsTerminal reports whether w, the standard output or error a run was
// given, is a terminal; any other writer is not.
func IsTerminal(w io.Writer) bool {
	if s, ok := w.(Stdout); ok {
		w = s.File
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// UsageError is a mistake in the command line: the commands exit 2 for it.
type UsageError struct{ Msg string }

func (e UsageError) Error() string { return e.Msg }

// Usagef returns a UsageError with the formatted message.
func Usagef(format string, args ...any) error { return UsageError{fmt.Sprintf(format, args...)} }

// IsUsage reports whether err is, or wraps, a UsageError.
func IsUsage(err error) bool {
	_, ok := errors.AsType[UsageError](err)
	return ok
}

// MissingStore refuses a file store whose directory does not exist: every
// read of it would find nothing, which hides a mistyped URL. hint ends the
// message, saying what to do. It returns nil for any other store.
func MissingStore(ns *nameservice.NameService, hint string) error {
	var d interface{ Dir() string }
	if !ns.As(&d) {
		return nil
	}
	if _, err := os.Stat(d.Dir()); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: no nameservice at %s: the directory does not exist (%s)", nameservice.ErrNotProvisioned, d.Dir(), hint)
	}
	return nil
}

// FlagLine is one flag as help shows it: --name, its argument, its usage
// and its default (package flag writes -name).
func FlagLine(f *flag.Flag) string {
	arg, usage := flag.UnquoteUsage(f)
	line := "  --" + f.Name
	if arg != "" {
		line += " " + arg
	}
	if usage != "" {
		line += "\n    \t" + strings.ReplaceAll(usage, "\n", "\n    \t")
	}
	if d := f.DefValue; d != "" && d != "false" && d != "0" && d != "[]" {
		line += fmt.Sprintf(" (default %s)", d)
	}
	return line + "\n"
}

// FlagError rewords an error of package flag with the double dashes help
// shows (flag writes "-name").
func FlagError(err error) string {
	return singleDash.ReplaceAllString(err.Error(), "$1--$2")
}

var singleDash = regexp.MustCompile(`((?:defined|argument|for flag|flag):? )-([A-Za-z])`)
