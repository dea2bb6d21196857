package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/internal/buildinfo"
)

func init() {
	commands["version"] = &command{usage: "", nargs: 0, local: true,
		summary: "print the version, commit and Go version of this build",
		example: "ns version --json",
		run: func(c *call) error {
			v := buildinfo.Read()
			return c.output(v, "ns %s", v)
		}}
	// __ids PREFIX is the completion scripts' helper: the IDs that start
	// with PREFIX, one a line, retracted ones included.
	commands["__ids"] = &command{usage: "PREFIX", nargs: 1, hidden: true, summary: "print the IDs starting with PREFIX (for completion)",
		example: "ns __ids my",
		run: func(c *call) error {
			n := 0
			for rec, err := range c.ns.List(c.ctx, nameservice.ListOptions{Prefix: c.args[0], IncludeRetracted: true}) {
				if err != nil || n == maxCompletedIDs {
					return nil // a completion shows what it found, or nothing
				}
				fmt.Fprintln(c.stdout, rec.ID)
				n++
			}
			return nil
		}}
	commands["completion"] = &command{usage: "bash|zsh", nargs: 1, local: true,
		summary: "print the completion script of a shell (commands, subcommands, flags, IDs); load it with source <(ns completion bash)",
		example: "ns completion zsh",
		run: func(c *call) error {
			switch c.args[0] {
			case "bash":
				return writeCompletion(c.stdout, bashCompletion, func(key, words string) string {
					return fmt.Sprintf("\t\t\t%s) reply=($(compgen -W %q -- \"$cur\")) ;;\n", key, words)
				})
			case "zsh":
				return writeCompletion(c.stdout, zshCompletion, func(key, words string) string {
					return fmt.Sprintf("\t\t%s) compadd -- %s ;;\n", key, words)
				})
			}
			return usagef("completion: no script for shell %q (want bash or zsh)", c.args[0])
		}}
}

// maxCompletedIDs bounds the IDs __ids prints: completion is for a person
// choosing among a few.
const maxCompletedIDs = 200

// quoteKey quotes a key with a space ("branch create") as a case pattern.
func quoteKey(k string) string {
	if strings.Contains(k, " ") {
		return `"` + k + `"`
	}
	return k
}

// writeCompletion fills tmpl's placeholders: {{NAMES}} (the commands),
// {{GROUPS}}, {{IDKEYS}} (a case pattern of the commands taking IDs, by key:
// "list", "branch create"), and {{FLAGCASES}} (each command's flags, global
// ones included) and {{SUBCASES}} (each group's subcommands), one case line
// each by caseLine from a key and its words.
func writeCompletion(w io.Writer, tmpl string, caseLine func(key, words string) string) error {
	var names, groups, idKeys []string
	for name, cmd := range commands {
		if cmd.hidden {
			continue
		}
		names = append(names, name)
		if cmd.subs != nil {
			groups = append(groups, name)
		}
	}
	slices.Sort(names)
	slices.Sort(groups)
	var flagCases, subCases strings.Builder
	for _, g := range groups {
		subCases.WriteString(caseLine(g, strings.Join(subNames(commands[g]), " ")))
	}
	for _, e := range listCommands() {
		var flags []string
		newFlagSet(e.cmd, new(string), new(string), new(bool)).VisitAll(func(f *flag.Flag) {
			flags = append(flags, "--"+f.Name)
		})
		flagCases.WriteString(caseLine(quoteKey(e.name), strings.Join(flags, " ")))
		if e.cmd.ids {
			idKeys = append(idKeys, quoteKey(e.name))
		}
	}
	_, err := io.WriteString(w, strings.NewReplacer(
		"{{NAMES}}", strings.Join(names, " "),
		"{{GROUPS}}", strings.Join(groups, " "),
		"{{IDKEYS}}", strings.Join(idKeys, " | "),
		"{{FLAGCASES}}", flagCases.String(),
		"{{SUBCASES}}", subCases.String(),
	).Replace(tmpl))
	return err
}

// scanWords is the scripts' loop over the words before the current one,
// which finds the command, the subcommand and the connection flags
// ({{CONN}}: the words to pass on, quoted as the shell needs).
const scanWords = `		case ${words[i]} in
		--url | --config | -url | -config)
			if [[ -z $cmd || ${words[i]} == *url ]]; then conn+=({{CONN}}); fi
			((i++)) ;;
		-*) ;;
		*)
			if [[ -z $cmd ]]; then
				cmd=${words[i]}
			elif [[ -z $sub && " {{GROUPS}} " == *" $cmd "* ]]; then
				sub=${words[i]}
			fi ;;
		esac
	done
	key=$cmd
	if [[ -n $sub ]]; then key="$cmd $sub"; fi
`

// The scripts find the command as the first word after ns that is not a
// flag or the value of --url or --config, and a group's subcommand as the
// word after it. They offer the command's flags for a word starting with
// "-", the kinds after --kind, files after --config and --state, a group's
// subcommands, completion's shells, and for a command taking IDs the IDs
// of the nameservice the line names (ns __ids, with the line's --url or
// --config); else command names. bash splits words at ':' (an ID's), so
// its script reads the line itself.
var bashCompletion = `# bash completion for ns; load with: source <(ns completion bash)
_ns() {
	local line=${COMP_LINE:0:COMP_POINT} cmd="" sub="" key i
	local -a words conn=() reply=()
	read -ra words <<<"$line"
	if [[ -z $line || $line == *[[:space:]] ]]; then words+=(""); fi
	local n=${#words[@]}
	local cur=${words[n-1]} prev=${words[n-2]}
	for ((i = 1; i < n - 1; i++)); do
` + strings.Replace(scanWords, "{{CONN}}", `"${words[i]}" "${words[i+1]}"`, 1) + `	case $prev in
	--kind) reply=($(compgen -W "ledger graph_source" -- "$cur")) ;;
	--config | --state) reply=($(compgen -f -- "$cur")) ;;
	--url) ;;
	*)
		if [[ -z $cmd ]]; then
			if [[ $cur == -* ]]; then
				reply=($(compgen -W "--url --config --json" -- "$cur"))
			else
				reply=($(compgen -W "{{NAMES}}" -- "$cur"))
			fi
		elif [[ $cur == -* ]]; then
			case $key in
{{FLAGCASES}}			esac
		elif [[ -z $sub && " {{GROUPS}} " == *" $cmd "* ]]; then
			case $cmd in
{{SUBCASES}}			esac
		elif [[ $cmd == completion ]]; then
			reply=($(compgen -W "bash zsh" -- "$cur"))
		else
			case $key in
			{{IDKEYS}}) reply=($(compgen -W "$(ns "${conn[@]}" __ids "$cur" 2>/dev/null)" -- "$cur")) ;;
			esac
		fi ;;
	esac
	# bash replaces only the part of the word after its last ':'.
	if [[ $cur == *:* && $COMP_WORDBREAKS == *:* ]]; then
		local colon=${cur%"${cur##*:}"}
		for i in "${!reply[@]}"; do reply[i]=${reply[i]#"$colon"}; done
	fi
	COMPREPLY=("${reply[@]}")
}
complete -F _ns ns
`

var zshCompletion = `#compdef ns
# zsh completion for ns; load with: source <(ns completion zsh)
_ns() {
	local cmd="" sub="" key cur=${words[CURRENT]} i
	local -a conn
	for ((i = 2; i < CURRENT; i++)); do
` + strings.Replace(scanWords, "{{CONN}}", "${words[i]} ${words[i+1]}", 1) + `	case ${words[CURRENT-1]} in
	--kind) compadd ledger graph_source; return ;;
	--config | --state) _files; return ;;
	--url) return ;;
	esac
	if [[ -z $cmd ]]; then
		if [[ $cur == -* ]]; then
			compadd -- --url --config --json
		else
			compadd -- {{NAMES}}
		fi
		return
	fi
	if [[ $cur == -* ]]; then
		case $key in
{{FLAGCASES}}		esac
		return
	fi
	if [[ -z $sub && " {{GROUPS}} " == *" $cmd "* ]]; then
		case $cmd in
{{SUBCASES}}		esac
		return
	fi
	if [[ $cmd == completion ]]; then
		compadd bash zsh
		return
	fi
	case $key in
	{{IDKEYS}}) compadd -- ${(f)"$(ns $conn __ids "$cur" 2>/dev/null)"} ;;
	esac
}
if [[ $zsh_eval_context[-1] == loadautoload ]]; then
	_ns "$@"
else
	compdef _ns ns
fi
`
