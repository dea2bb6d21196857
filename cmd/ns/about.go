package main

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"nameservice.dev/nameservice/internal/buildinfo"
)

func init() {
	commands["version"] = &command{usage: "", nargs: 0, local: true, run: func(c *call) error {
		v := buildinfo.Read()
		if c.json {
			return c.printJSON(v)
		}
		fmt.Fprintf(c.stdout, "ns %s\n", v)
		return nil
	}}
	commands["completion"] = &command{usage: "bash|zsh", nargs: 1, local: true, run: func(c *call) error {
		switch c.args[0] {
		case "bash":
			return writeBashCompletion(c.stdout)
		case "zsh":
			return writeZshCompletion(c.stdout)
		}
		return usagef("completion: no script for shell %q (want bash or zsh)", c.args[0])
	}}
}

// completionWords returns the command names, sorted, and for each command the
// flags it takes (global ones included), with their leading "--".
func completionWords() ([]string, map[string][]string) {
	names := make([]string, 0, len(commands))
	flags := map[string][]string{}
	for name, cmd := range commands {
		names = append(names, name)
		fs := flag.NewFlagSet(name, flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		if cmd.flags != nil {
			cmd.flags(fs)
		}
		for _, g := range []string{"url", "config", "json"} {
			if fs.Lookup(g) == nil {
				fs.Bool(g, false, "")
			}
		}
		fs.VisitAll(func(f *flag.Flag) { flags[name] = append(flags[name], "--"+f.Name) })
	}
	sort.Strings(names)
	return names, flags
}

// The scripts find the command as the first word after ns that is not a flag
// or the value of --url or --config, then offer that command's flags for a
// word starting with "-", the kinds after --kind, files after --config,
// --state and completion's shells; else command names.
const bashCompletion = `# bash completion for ns; load with: source <(ns completion bash)
_ns() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd="" i
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		--url | --config | -url | -config) ((i++)) ;;
		-*) ;;
		*) cmd=${COMP_WORDS[i]}; break ;;
		esac
	done
	case $prev in
	--kind) COMPREPLY=($(compgen -W "ledger graph_source" -- "$cur")); return ;;
	--config | --state) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	--url) return ;;
	esac
	if [[ -z $cmd ]]; then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--url --config --json" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "%s" -- "$cur"))
		fi
		return
	fi
	if [[ $cur == -* ]]; then
		case $cmd in
%s		esac
		return
	fi
	if [[ $cmd == completion ]]; then
		COMPREPLY=($(compgen -W "bash zsh" -- "$cur"))
	fi
}
complete -F _ns ns
`

func writeBashCompletion(w io.Writer) error {
	return writeCompletion(w, bashCompletion, func(name, flags string) string {
		return fmt.Sprintf("\t\t%s) COMPREPLY=($(compgen -W %q -- \"$cur\")) ;;\n", name, flags)
	})
}

// writeCompletion fills tmpl with the command names and one case line per
// command, as caseLine writes it from the command and its flags.
func writeCompletion(w io.Writer, tmpl string, caseLine func(name, flags string) string) error {
	names, flags := completionWords()
	var cases strings.Builder
	for _, n := range names {
		cases.WriteString(caseLine(n, strings.Join(flags[n], " ")))
	}
	_, err := fmt.Fprintf(w, tmpl, strings.Join(names, " "), cases.String())
	return err
}

const zshCompletion = `#compdef ns
# zsh completion for ns; load with: source <(ns completion zsh)
_ns() {
	local cmd="" i
	for ((i = 2; i < CURRENT; i++)); do
		case ${words[i]} in
		--url | --config | -url | -config) ((i++)) ;;
		-*) ;;
		*) cmd=${words[i]}; break ;;
		esac
	done
	case ${words[CURRENT-1]} in
	--kind) compadd ledger graph_source; return ;;
	--config | --state) _files; return ;;
	--url) return ;;
	esac
	if [[ -z $cmd ]]; then
		if [[ ${words[CURRENT]} == -* ]]; then
			compadd -- --url --config --json
		else
			compadd -- %s
		fi
		return
	fi
	if [[ ${words[CURRENT]} == -* ]]; then
		case $cmd in
%s		esac
		return
	fi
	if [[ $cmd == completion ]]; then
		compadd bash zsh
	fi
}
if [[ $zsh_eval_context[-1] == loadautoload ]]; then
	_ns "$@"
else
	compdef _ns ns
fi
`

func writeZshCompletion(w io.Writer) error {
	return writeCompletion(w, zshCompletion, func(name, flags string) string {
		return fmt.Sprintf("\t\t%s) compadd -- %s ;;\n", name, flags)
	})
}
