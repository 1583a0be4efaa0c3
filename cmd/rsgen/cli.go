package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/rsgen/rsgen/config"
	"golang.org/x/sys/unix"
)

// Exit codes, documented in the README and in `rsgen help`.
const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2
	exitInterrupted = 130

	// exitHelp is returned by parseFlags after -h: stop, successfully.
	exitHelp = -1
)

// command is one subcommand of rsgen.
type command struct {
	summary string
	usage   string // full help text, shown by `rsgen help NAME`
	run     func(ctx context.Context, io cliIO, args []string) int
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

func commands() map[string]*command {
	return map[string]*command{
		"build":   buildCommand,
		"status":  statusCommand,
		"init":    initCommand,
		"check":   checkCommand,
		"version": versionCommand,
		"help":    helpCommand,
		"watch":   watchCommand,
		"serve":   serveCommand,
		"deploy":  deployCommand,
	}
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
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

func run(ctx context.Context, cio cliIO, args []string) int {
	name := "build"
	switch {
	case len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help"):
		name, args = "help", nil
	case len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-':
		name, args = args[0], args[1:]
	}
	cmd, ok := commands()[name]
	if !ok {
		fmt.Fprintf(cio.stderr, "rsgen: unknown command %q%s\nRun 'rsgen help' for the list of commands.\n", name, config.Closest(name, commandNames()))
		return exitUsage
	}
	code := cmd.run(ctx, cio, args)
	if code == exitHelp {
		return exitOK
	}
	if code == exitFailure && errors.Is(ctx.Err(), context.Canceled) {
		return exitInterrupted
	}
	return code
}

// parseFlags parses a command's flags. A non-zero code means stop: usage
// was asked for with -h (printed to stdout; the command exits 0) or the
// flags are wrong (reported; exit 2).
func parseFlags(fs *flag.FlagSet, args []string, usage string, stdout io.Writer) int {
	fs.Usage = func() {} // parseFlags reports, below
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(stdout, usage)
		return exitHelp
	}
	if err != nil {
		synopsis, _, _ := strings.Cut(usage, "\n")
		fmt.Fprintf(fs.Output(), "%s\nRun 'rsgen help %s' for details.\n", synopsis, fs.Name())
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "rsgen %s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return exitUsage
	}
	return exitOK
}

var helpCommand = &command{
	summary: "show help for rsgen or one command",
	usage: `usage: rsgen help [COMMAND]

Shows the list of commands, or the full help of one command.`,
}

func init() { helpCommand.run = runHelp }

// commandNames returns the names of the commands, sorted.
func commandNames() []string {
	var names []string
	for n := range commands() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func runHelp(_ context.Context, cio cliIO, args []string) int {
	cmds := commands()
	if len(args) == 1 {
		if c, ok := cmds[args[0]]; ok {
			fmt.Fprintln(cio.stdout, c.usage)
			return exitOK
		}
		if text, ok := helpTopics()[args[0]]; ok {
			fmt.Fprintln(cio.stdout, text)
			return exitOK
		}
		fmt.Fprintf(cio.stderr, "rsgen help: unknown command or topic %q%s\n", args[0], config.Closest(args[0], append(commandNames(), topicNames()...)))
		return exitUsage
	}
	if len(args) > 1 {
		fmt.Fprintln(cio.stderr, helpCommand.usage)
		return exitUsage
	}
	fmt.Fprint(cio.stdout, `rsgen builds a static ResourceSync (ANSI/NISO Z39.99-2017) site from a tree of files.

usage: rsgen [COMMAND] [FLAGS]

commands:
`)
	for _, n := range commandNames() {
		fmt.Fprintf(cio.stdout, "  %-8s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintf(cio.stdout, `
help topics: %s (rsgen help TOPIC)

With no command, rsgen runs "build". Run "rsgen help COMMAND" for a command's flags.
`, strings.Join(topicNames(), ", "))
	fmt.Fprint(cio.stdout, `
exit codes: 0 success, 1 failure, 2 usage or configuration error, 130 interrupted.
`)
	return exitOK
}
