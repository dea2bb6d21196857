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
// terminal, else a plain line every interval (logs and CI read those).
type progress interface {
	add()                          // one more record
	tick()                         // the interval passed
	println(w io.Writer, s string) // print s without garbling the bar
	finish()
}

// newProgress returns a bar when w is a terminal, else plain lines made by
// line.
func newProgress(name string, w io.Writer, line func() string) progress {
	if f := cli.File(w); f != nil && term.IsTerminal(int(f.Fd())) {
		// The total is unknown: the source is streamed, never counted first.
		return &barProgress{bar: progressbar.NewOptions64(-1,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(name),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString("records"),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)}
	}
	return &lineProgress{w: w, line: line}
}

type barProgress struct{ bar *progressbar.ProgressBar }

func (p *barProgress) add()  { _ = p.bar.Add(1) }
func (p *barProgress) tick() {}
func (p *barProgress) println(w io.Writer, s string) {
	_ = p.bar.Clear()
	fmt.Fprintln(w, s)
}
func (p *barProgress) finish() { _ = p.bar.Finish() }

type lineProgress struct {
	w    io.Writer
	line func() string
}

func (p *lineProgress) add()                          {}
func (p *lineProgress) tick()                         { fmt.Fprintln(p.w, p.line()) }
func (p *lineProgress) println(w io.Writer, s string) { fmt.Fprintln(w, s) }
func (p *lineProgress) finish()                       {}
