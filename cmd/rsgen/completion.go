package main

// Shell completion and the man page, both rendered from the commands'
// own flag sets and help texts, so that they never disagree with rsgen
// help.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
)

var completionCommand = &command{
	name:     "completion",
	summary:  "print shell completion (bash, zsh, fish) or the man page (man)",
	synopsis: "bash|zsh|fish|man",
	about: `Prints, on stdout, the completion script of a shell or rsgen's man page,
made from the same help as rsgen help.`,
	more: `examples:
  source <(rsgen completion bash)
  rsgen completion zsh > "${fpath[1]}/_rsgen"
  rsgen completion fish > ~/.config/fish/completions/rsgen.fish
  rsgen completion man > rsgen.1 && man ./rsgen.1`,
	flags:   noFlags("completion"),
	minArgs: 1,
	maxArgs: 1,
}

func init() { completionCommand.run = runCompletion }

func runCompletion(_ context.Context, cio cliIO, _ any, args []string) int {
	write := map[string]func(io.Writer){"bash": writeBash, "zsh": writeZsh, "fish": writeFish, "man": writeMan}[args[0]]
	if write == nil {
		fmt.Fprintf(cio.stderr, "rsgen completion: %q: want bash, zsh, fish or man\n", args[0])
		return exitUsage
	}
	write(cio.stdout)
	return exitOK
}

// flagNames returns the flags of a command, with their dashes.
func flagNames(c *command) []string {
	fs, _ := c.flags()
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, "--"+f.Name) })
	return names
}

// takesFile reports whether a flag's argument is a file or folder.
func takesFile(f *flag.Flag) bool {
	arg, _ := flag.UnquoteUsage(f)
	return arg == "FILE" || arg == "DIR"
}

func writeBash(w io.Writer) {
	fmt.Fprintf(w, `# bash completion for rsgen: source <(rsgen completion bash)
_rsgen() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd=build i
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in -*) ;; *) cmd=${COMP_WORDS[i]}; break ;; esac
    done
    case $prev in
        %s) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    esac
    if [[ $cur == -* ]]; then
        case $cmd in
`, strings.Join(fileFlags(), "|"))
	for _, n := range commandNames() {
		fmt.Fprintf(w, "            %s) COMPREPLY=($(compgen -W '%s' -- \"$cur\")) ;;\n", n, strings.Join(flagNames(commands()[n]), " "))
	}
	fmt.Fprintf(w, `        esac
    elif [[ $cmd == build && $COMP_CWORD -eq 1 ]]; then
        COMPREPLY=($(compgen -W '%s' -- "$cur"))
    elif [[ $cmd == help || $cmd == completion ]]; then
        COMPREPLY=($(compgen -W '%s' -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}
complete -F _rsgen rsgen
`, strings.Join(commandNames(), " "), strings.Join(append(append(commandNames(), topicNames()...), "bash", "zsh", "fish", "man"), " "))
}

// fileFlags returns the flags, of any command, whose argument is a file or
// folder.
func fileFlags() []string {
	seen := map[string]bool{}
	var names []string
	for _, n := range commandNames() {
		fs, _ := commands()[n].flags()
		fs.VisitAll(func(f *flag.Flag) {
			if takesFile(f) && !seen[f.Name] {
				seen[f.Name] = true
				names = append(names, "--"+f.Name)
			}
		})
	}
	return names
}

func writeZsh(w io.Writer) {
	fmt.Fprint(w, "#compdef rsgen\n# zsh completion for rsgen: rsgen completion zsh > \"${fpath[1]}/_rsgen\"\n_rsgen() {\n    local -a commands\n    commands=(\n")
	for _, n := range commandNames() {
		fmt.Fprintf(w, "        %s\n", zshQuote(n+":"+commands()[n].summary))
	}
	fmt.Fprint(w, "    )\n    if (( CURRENT == 2 )); then\n        _describe command commands\n        return\n    fi\n    case $words[2] in\n")
	for _, n := range commandNames() {
		fs, _ := commands()[n].flags()
		fmt.Fprintf(w, "        %s)\n            _arguments", n)
		fs.VisitAll(func(f *flag.Flag) {
			_, usage := flag.UnquoteUsage(f)
			usage, _, _ = strings.Cut(usage, "\n")
			spec := "--" + f.Name + "[" + strings.NewReplacer("[", "(", "]", ")", ":", " ").Replace(usage) + "]"
			if !isBoolFlag(f) {
				spec += ":value:"
				if takesFile(f) {
					spec += "_files"
				}
			}
			fmt.Fprintf(w, " \\\n                %s", zshQuote(spec))
		})
		fmt.Fprint(w, " \\\n                '*:file:_files' ;;\n")
	}
	fmt.Fprint(w, "    esac\n}\n_rsgen \"$@\"\n")
}

// zshQuote quotes s for zsh, in single quotes.
func zshQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func writeFish(w io.Writer) {
	fmt.Fprintln(w, "# fish completion for rsgen: rsgen completion fish > ~/.config/fish/completions/rsgen.fish")
	fmt.Fprintf(w, "complete -c rsgen -f -n __fish_use_subcommand -a %s\n", zshQuote(strings.Join(commandNames(), " ")))
	for _, n := range commandNames() {
		fs, _ := commands()[n].flags()
		fs.VisitAll(func(f *flag.Flag) {
			_, usage := flag.UnquoteUsage(f)
			usage, _, _ = strings.Cut(usage, "\n")
			opt := ""
			if !isBoolFlag(f) {
				opt = " -r"
				if takesFile(f) {
					opt += " -F"
				}
			}
			fmt.Fprintf(w, "complete -c rsgen -n '__fish_seen_subcommand_from %s' -l %s%s -d %s\n", n, f.Name, opt, zshQuote(usage))
		})
	}
}

// writeMan writes rsgen(1) in roff: the overview, then every command's
// help, verbatim where its layout matters.
func writeMan(w io.Writer) {
	fmt.Fprintf(w, ".TH RSGEN 1 \"\" \"rsgen %s\" \"User Commands\"\n.SH NAME\nrsgen \\- build static ResourceSync sites\n.SH SYNOPSIS\n.B rsgen\n[\\fICOMMAND\\fR] [\\fIFLAGS\\fR]\n.SH DESCRIPTION\n", roff(version()))
	fmt.Fprintf(w, ".nf\n%s.fi\n.SH COMMANDS\n", roff(overview()))
	for _, n := range commandNames() {
		fmt.Fprintf(w, ".SS rsgen %s\n.nf\n%s.fi\n", roff(n), roff(commands()[n].help()))
	}
	fmt.Fprintf(w, ".SH EXIT STATUS\n0 success, 1 failure, 2 usage or configuration error, 3 published but notifications pending (deploy, notify), 130 interrupted.\n.SH SEE ALSO\nrsgen help config, rsgen help hosting, rsgen help ci\n")
}

// roff escapes text for roff: backslashes, and a leading dot or quote.
func roff(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			lines[i] = `\&` + l
		}
	}
	return strings.Join(lines, "\n")
}
