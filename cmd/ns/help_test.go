package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"strings"
	"testing"
)

// TestHelpOfEveryCommand: ns COMMAND --help and ns help COMMAND print the
// same: the command's usage, what it does, an example, and its own flags
// (no other subcommand's); both exit 0.
func TestHelpOfEveryCommand(t *testing.T) {
	for _, e := range listCommands() {
		words := strings.Fields(e.name)
		var out, alt, errb bytes.Buffer
		if code := run(context.Background(), append(words, "--help"), &out, &errb); code != exitOK || errb.Len() > 0 {
			t.Errorf("ns %s --help: exit %d, stderr %q", e.name, code, errb.String())
			continue
		}
		if code := run(context.Background(), append([]string{"help"}, words...), &alt, &errb); code != exitOK || alt.String() != out.String() {
			t.Errorf("ns help %s: exit %d, and not what --help prints:\n%s", e.name, code, alt.String())
		}
		help := out.String()
		if !strings.HasPrefix(help, "usage: ns "+e.name+" ") || !strings.Contains(help, "\n"+e.cmd.summary+"\n") ||
			!strings.Contains(help, "\nexample:\n  ns ") {
			t.Errorf("ns %s --help lacks its usage, summary or example:\n%s", e.name, help)
		}
		own := map[string]bool{}
		fs := flag.NewFlagSet(e.name, flag.ContinueOnError)
		if e.cmd.flags != nil {
			e.cmd.flags(fs)
		}
		fs.VisitAll(func(f *flag.Flag) {
			own[f.Name] = true
			if !strings.Contains(help, "--"+f.Name) {
				t.Errorf("ns %s --help does not list --%s:\n%s", e.name, f.Name, help)
			}
		})
		if group := commands[words[0]]; group.subs != nil {
			for name, sib := range group.subs {
				sfs := flag.NewFlagSet(name, flag.ContinueOnError)
				if sib.flags != nil {
					sib.flags(sfs)
				}
				sfs.VisitAll(func(f *flag.Flag) {
					if !own[f.Name] && strings.Contains(help, "--"+f.Name+"\n") {
						t.Errorf("ns %s --help lists --%s, a flag of %s %s", e.name, f.Name, words[0], name)
					}
				})
			}
		}
	}
}

// TestHelpExamplesParse: the example of every command's help is a command
// line ns accepts: the command it documents, with flags and arguments that
// parse.
func TestHelpExamplesParse(t *testing.T) {
	for _, e := range listCommands() {
		words := shellWords(e.cmd.example)
		if len(words) < 2 || words[0] != "ns" {
			t.Errorf("%s: example %q is not an ns command line", e.name, e.cmd.example)
			continue
		}
		inv, err := parseLine(words[1:], io.Discard, io.Discard)
		if err != nil || inv == nil || inv.cmd != e.cmd {
			t.Errorf("%s: example %q does not parse as the command: %v", e.name, e.cmd.example, err)
		}
	}
}

// shellWords splits a command line as a POSIX shell splits simple words:
// at blanks, single quotes keeping what they enclose.
func shellWords(s string) []string {
	var words []string
	var w strings.Builder
	inWord, quoted := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted, inWord = !quoted, true
		case (r == ' ' || r == '\t') && !quoted:
			if inWord {
				words = append(words, w.String())
				w.Reset()
			}
			inWord = false
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

// TestHelpAndNoArguments: ns alone is a usage error (exit 2) with the help
// on stderr; ns help lists every exit code README.md lists; help of an
// unknown command is a usage error; a group's help lists its subcommands.
func TestHelpAndNoArguments(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), nil, &out, &errb); code != exitUsage || out.Len() != 0 || !strings.Contains(errb.String(), "usage: ns ") {
		t.Errorf("ns with no arguments: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	c := newCLI(t)
	help := c.want(exitOK, "help")
	for code := range 8 {
		if !strings.Contains(help, "\n  "+string(rune('0'+code))+"  ") {
			t.Errorf("ns help does not explain exit code %d:\n%s", code, help)
		}
	}
	c.want(exitUsage, "help", "nosuch")
	c.want(exitUsage, "help", "branch", "nosuch")
	group := c.want(exitOK, "help", "branch")
	for _, s := range []string{"ns branch create ID", "ns branch drop ID", "ns branch list NAME"} {
		if !strings.Contains(group, s) {
			t.Errorf("ns help branch lacks %q:\n%s", s, group)
		}
	}
	c.want(exitUsage, "branch")
	c.want(exitUsage, "branch", "frobnicate", "x")
}

// TestFlagErrorsUseDoubleDashes: a flag error names the flag as help shows
// it, --name.
func TestFlagErrorsUseDoubleDashes(t *testing.T) {
	c := newCLI(t)
	c.want(exitOK, "init", "mydb")
	for args, flagName := range map[string]string{
		"list --nosuch":                                        "--nosuch",
		"push-status mydb --expect-v x s":                      "--expect-v",
		"--nosuch list":                                        "--nosuch",
		"branch create mydb:dev --from":                        "--from",
		"cas-ref mydb head --expect-t 9223372036854775808 1 c": "--expect-t",
	} {
		code, _, errs := c.run(strings.Fields(args)...)
		if code != exitUsage || !strings.Contains(errs, flagName) || strings.Contains(errs, " "+flagName[1:]) {
			t.Errorf("ns %s: exit %d, stderr %q; want exit 2 naming %s", args, code, errs, flagName)
		}
	}
}
