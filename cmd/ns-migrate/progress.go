package main

import (
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"nameservice.dev/nameservice/internal/cli"
)

// progress shows how a pass goes: a spinner with a count and a rate on a
// terminal (bar), else a plain line made by line every interval (logs and
// CI read those).
type progress struct {
	bar  *progressbar.ProgressBar // nil: not a terminal
	w    io.Writer
	line func() string
}

func newProgress(name string, w io.Writer, line func() string) *progress {
	p := &progress{w: w, line: line}
	if f := cli.File(w); f != nil && term.IsTerminal(int(f.Fd())) {
		// The total is unknown: the source is streamed, never counted first.
		p.bar = progressbar.NewOptions64(-1,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(name),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString("records"),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
	}
	return p
}

// add counts one more record.
func (p *progress) add() {
	if p.bar != nil {
		_ = p.bar.Add(1)
	}
}

// tick is called every interval.
func (p *progress) tick() {
	if p.bar == nil {
		fmt.Fprintln(p.w, p.line())
	}
}

// println prints s without garbling the bar.
func (p *progress) println(w io.Writer, s string) {
	if p.bar != nil {
		_ = p.bar.Clear()
	}
	fmt.Fprintln(w, s)
}

func (p *progress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
