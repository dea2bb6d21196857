package testenv

import (
	"bufio"
	"fmt"
	"io"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ServeProcess is a server (`ns serve`, or the benchmarks' bare floor) in a
// process of its own, as deployed, its memory measured apart from the test's.
type ServeProcess struct {
	URL    string           // http://127.0.0.1:PORT
	Cmd    *exec.Cmd        // the running process
	Stderr *strings.Builder // what it logged; read it once the process has written it
}

// ServeCLI starts `ns --url URL serve --listen 127.0.0.1:0 ARGS...` (cmd/ns
// built once per test process) with StartServe.
func ServeCLI(tb testing.TB, url string, args ...string) *ServeProcess {
	tb.Helper()
	return StartServe(tb, NSBinary(tb), url, args...)
}

// NSBinary returns the path of cmd/ns, built once per test process.
func NSBinary(tb testing.TB) string {
	tb.Helper()
	bin, err := nsBinary()
	Must(tb, err)
	return bin
}

// StartServe starts `BIN --url URL serve --listen 127.0.0.1:0 ARGS...`,
// waits for the URL it prints, and kills it when the test ends.
func StartServe(tb testing.TB, bin, url string, args ...string) *ServeProcess {
	tb.Helper()
	return StartCmd(tb, exec.Command(bin, append([]string{"--url", url, "serve", "--listen", "127.0.0.1:0"}, args...)...))
}

// StartCmd starts cmd, a server of ours given as any command line (a
// documented one, run by a shell), waits for the "listening on URL" line it
// prints first, and kills it when the test ends.
func StartCmd(tb testing.TB, cmd *exec.Cmd) *ServeProcess {
	tb.Helper()
	p, err := startProcess(tb, cmd)
	Must(tb, err)
	return p
}

// startProcess is StartCmd, returning its failure: for a caller outside the
// test's goroutine.
func startProcess(tb testing.TB, cmd *exec.Cmd) (*ServeProcess, error) {
	name := filepath.Base(cmd.Path)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p := &ServeProcess{Cmd: cmd, Stderr: &strings.Builder{}}
	cmd.Stderr = p.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	tb.Cleanup(stop)
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- s
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case s := <-line:
		u, ok := strings.CutPrefix(strings.TrimSpace(s), "listening on ")
		if !ok {
			stop()
			return nil, fmt.Errorf("%s printed %q; stderr %s", name, s, p.Stderr)
		}
		p.URL = u
		return p, nil
	case <-time.After(time.Minute):
		stop()
		return nil, fmt.Errorf("%s did not start within a minute; stderr %s", name, p.Stderr)
	}
}

// Kill kills the server with SIGKILL, as a crash would, and waits until it
// has exited. Its Stderr is complete then.
func (p *ServeProcess) Kill() error {
	if err := p.Cmd.Process.Kill(); err != nil {
		return err
	}
	_ = p.Cmd.Wait() // "signal: killed"
	return nil
}

// Restart starts a server that has exited again, with the same arguments
// but --listen its old address. It may be called outside the test's goroutine.
func (p *ServeProcess) Restart(tb testing.TB) (*ServeProcess, error) {
	u, err := url.Parse(p.URL)
	if err != nil {
		return nil, err
	}
	args := slices.Clone(p.Cmd.Args[1:])
	for i, a := range args[:len(args)-1] {
		if a == "--listen" {
			args[i+1] = u.Host
		}
	}
	return startProcess(tb, exec.Command(p.Cmd.Path, args...))
}

// PeakRSS runs f and returns the server's peak resident set during f and
// its resident set just before, in MB (see peakRSS).
func (p *ServeProcess) PeakRSS(tb testing.TB, f func()) (peak, before float64) {
	tb.Helper()
	return peakRSS(tb, "/proc/"+strconv.Itoa(p.Cmd.Process.Pid), " of ns serve", f)
}
