package main

import (
	"io"
	"time"

	"github.com/schollz/progressbar/v3"

	"nameservice.dev/nameservice/internal/cli"
)

// newBar returns the progress of a pass: a spinner with a count and a rate,
// shown only when w is a terminal (it reports false then; elsewhere the
// tally prints a plain line every interval, which logs and CI read).
func newBar(name string, w io.Writer) (*progressbar.ProgressBar, bool) {
	onTerminal := cli.IsTerminal(w)
	// The total is unknown: the source is streamed, never counted first.
	return progressbar.NewOptions64(-1,
		progressbar.OptionSetVisibility(onTerminal),
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(name),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("records"),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	), onTerminal
}
