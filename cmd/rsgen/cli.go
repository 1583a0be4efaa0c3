package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/rsgen/rsgen/config"
)

// Exit codes, documented in the README and in `rsgen help`.
const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2
	exitInterrupted = 130
)

// command is one subcommand of rsgen. Each command has a flag set of its
// own, made by flags: only its own flags parse, and its help, its shell
// completion and the man page are rendered from that set.
type command struct {
	name     string
	summary  string
	synopsis string // what follows the name: "[flags]", "PATH|URL [flags]"
	about    string // what the command does, before its flags in the help
	more     string // after the flags: notes, examples, exit codes
	// flags returns a fresh flag set with the command's flags, and what
	// its parsed values go into; run receives the same value.
	flags func() (*flag.FlagSet, any)
	// args is how many arguments the command takes after its flags: its
	// least and most (-1: any).
	minArgs, maxArgs int
	run              func(ctx context.Context, cio cliIO, values any, args []string) int
}

// cliIO is what a command may touch of the process, so that commands can be
// tested without it.
type cliIO struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	// isTerminal reports whether w is a terminal (nil: never), for
	// progress displays.
	isTerminal func(w io.Writer) bool
}

// commands returns every command by name.
func commands() map[string]*command {
	cmds := map[string]*command{}
	for _, c := range []*command{buildCommand, statusCommand, initCommand, checkCommand, versionCommand,
		helpCommand, watchCommand, serveCommand, completionCommand, deployCommand, notifyCommand, syncCommand} {
		cmds[c.name] = c
	}
	return cmds
}

// commandNames returns the names of the commands, sorted.
func commandNames() []string {
	names := make([]string, 0, len(commands()))
	for n := range commands() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Main runs rsgen with os.Args and returns the exit code.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx, cliIO{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, isTerminal: isTerminal}, os.Args[1:])
}

// isTerminal reports whether w is a file open on a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && terminal(f)
}

func run(ctx context.Context, cio cliIO, args []string) int {
	name := "build"
	switch {
	case len(args) > 0 && slices.Contains([]string{"-h", "-help", "--help"}, args[0]):
		name, args = "help", nil
	case len(args) > 0 && slices.Contains([]string{"-version", "--version"}, args[0]):
		name, args = "version", args[1:]
	case len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-':
		name, args = args[0], args[1:]
	}
	cmd, ok := commands()[name]
	if !ok {
		fmt.Fprintf(cio.stderr, "rsgen: unknown command %q%s\nRun 'rsgen help' for the list of commands.\n", name, config.Closest(name, commandNames()))
		return exitUsage
	}
	values, rest, code := cmd.parse(cio, args)
	if values == nil {
		return code
	}
	code = cmd.run(ctx, cio, values, rest)
	if code == exitFailure && errors.Is(ctx.Err(), context.Canceled) {
		return exitInterrupted
	}
	return code
}

// parse parses a command's arguments: its flags, anywhere among its
// arguments, and the arguments. It returns nil values when the command
// must not run: -h asked for its help (printed, code 0), or the arguments
// are wrong (reported, code 2).
func (c *command) parse(cio cliIO, args []string) (values any, rest []string, code int) {
	fs, values := c.flags()
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(cio.stdout, c.help())
			return nil, nil, exitOK
		}
		if err != nil {
			fmt.Fprintf(cio.stderr, "rsgen %s: %s\nRun 'rsgen help %s' for its flags.\n", c.name, c.flagError(err), c.name)
			return nil, nil, exitUsage
		}
		if fs.NArg() == 0 {
			break
		}
		rest = append(rest, fs.Arg(0))
		args = fs.Args()[1:]
	}
	switch {
	case len(rest) > c.maxArgs && c.maxArgs >= 0:
		fmt.Fprintf(cio.stderr, "rsgen %s: unexpected argument %q\nusage: %s\n", c.name, rest[c.maxArgs], c.usageLine())
		return nil, nil, exitUsage
	case len(rest) < c.minArgs:
		fmt.Fprintf(cio.stderr, "rsgen %s: missing argument\nusage: %s\n", c.name, c.usageLine())
		return nil, nil, exitUsage
	}
	return values, rest, exitOK
}

// flagError says what is wrong with the flags, naming the commands that
// have a flag this one lacks.
func (c *command) flagError(err error) string {
	msg := err.Error()
	name, undefined := strings.CutPrefix(msg, "flag provided but not defined: -")
	if !undefined {
		return strings.Replace(msg, " -", " --", 1)
	}
	var owners []string
	for _, n := range commandNames() {
		if fs, _ := commands()[n].flags(); fs.Lookup(name) != nil {
			owners = append(owners, n)
		}
	}
	if len(owners) == 0 {
		var names []string
		fs, _ := c.flags()
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		return fmt.Sprintf("--%s is not a flag of rsgen %s%s", name, c.name, config.Closest(name, names))
	}
	return fmt.Sprintf("--%s is not a flag of rsgen %s (it is one of rsgen %s)", name, c.name, strings.Join(owners, ", rsgen "))
}

// usageLine is the command's synopsis: rsgen NAME and its arguments.
func (c *command) usageLine() string {
	return strings.TrimSpace("rsgen " + c.name + " " + c.synopsis)
}

// help returns the command's full help: its synopsis, what it does, its
// flags and the rest, as rsgen help COMMAND prints it.
func (c *command) help() string {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: %s\n\n%s\n", c.usageLine(), c.about)
	if flags := flagHelp(c); flags != "" {
		fmt.Fprintf(&b, "\nflags:\n%s", flags)
	}
	if c.more != "" {
		fmt.Fprintf(&b, "\n%s\n", c.more)
	}
	return b.String()
}

// flagHelp lists a command's flags, one entry each, with the argument
// named in its usage string (`FILE`), as the flag package does.
func flagHelp(c *command) string {
	fs, _ := c.flags()
	var b strings.Builder
	fs.VisitAll(func(f *flag.Flag) {
		arg, usage := flag.UnquoteUsage(f)
		if isBoolFlag(f) {
			arg = ""
		}
		head := "  --" + f.Name
		if arg != "" {
			head += " " + arg
		}
		if d := f.DefValue; d != "" && d != "false" && d != "0" && d != "0s" && d != "-1" {
			usage += " (default " + d + ")"
		}
		lines := strings.Split(usage, "\n")
		if len(head) < 21 {
			fmt.Fprintf(&b, "%-22s%s\n", head, lines[0])
		} else {
			fmt.Fprintf(&b, "%s\n%22s%s\n", head, "", lines[0])
		}
		for _, l := range lines[1:] {
			fmt.Fprintf(&b, "%22s%s\n", "", l)
		}
	})
	return b.String()
}

// isBoolFlag reports whether f takes no argument.
func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// noFlags is the flags function of a command without flags.
func noFlags(name string) func() (*flag.FlagSet, any) {
	return func() (*flag.FlagSet, any) { return flag.NewFlagSet(name, flag.ContinueOnError), struct{}{} }
}

var helpCommand = &command{
	name:     "help",
	summary:  "show help for rsgen, a command or a topic",
	synopsis: "[COMMAND|TOPIC]",
	about:    "Shows the list of commands, the full help of one command, or a topic.",
	flags:    noFlags("help"),
	maxArgs:  1,
}

func init() { helpCommand.run = runHelp }

func runHelp(_ context.Context, cio cliIO, _ any, args []string) int {
	if len(args) == 1 {
		if c, ok := commands()[args[0]]; ok {
			fmt.Fprint(cio.stdout, c.help())
			return exitOK
		}
		if text, ok := helpTopics()[args[0]]; ok {
			fmt.Fprintln(cio.stdout, text)
			return exitOK
		}
		fmt.Fprintf(cio.stderr, "rsgen help: unknown command or topic %q%s\n", args[0], config.Closest(args[0], append(commandNames(), topicNames()...)))
		return exitUsage
	}
	fmt.Fprint(cio.stdout, overview())
	return exitOK
}

// overview is rsgen's own help: the commands and topics.
func overview() string {
	var b strings.Builder
	b.WriteString(`rsgen builds a static ResourceSync (ANSI/NISO Z39.99-2017) site from a tree of files.

usage: rsgen [COMMAND] [FLAGS]

commands:
`)
	for _, n := range commandNames() {
		fmt.Fprintf(&b, "  %-10s %s\n", n, commands()[n].summary)
	}
	fmt.Fprintf(&b, `
help topics: %s (rsgen help TOPIC)

With no command, rsgen runs "build". Run "rsgen help COMMAND" for a command's flags.
rsgen --version prints the version.

exit codes: 0 success, 1 failure, 2 usage or configuration error, 3 published
but notifications pending (deploy, notify), 130 interrupted.
`, strings.Join(topicNames(), ", "))
	return b.String()
}
