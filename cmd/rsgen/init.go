package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"

	"github.com/rsgen/rsgen/config"
)

var initCommand = &command{
	summary: "write a commented rsgen.toml",
	usage:   initUsage,
	run:     runInit,
}

const initUsage = `usage: rsgen init [--force]

Writes rsgen.toml, with every key commented and set to its default, into the
working folder. Set base_url, then run "rsgen build".

flags:
  --force   overwrite an existing rsgen.toml`

func runInit(_ context.Context, cio cliIO, args []string) int {
	fl := flag.NewFlagSet("init", flag.ContinueOnError)
	fl.SetOutput(cio.stderr)
	force := fl.Bool("force", false, "")
	if code := parseFlags(fl, args, initUsage, cio.stdout); code != exitOK {
		return code
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if *force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(config.FileName, flags, 0o644)
	if errors.Is(err, fs.ErrExist) {
		fmt.Fprintf(cio.stderr, "rsgen init: %s already exists (use --force to overwrite it)\n", config.FileName)
		return exitFailure
	}
	if err == nil {
		_, err = f.WriteString(config.Example)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(cio.stderr, "rsgen init: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(cio.stdout, "wrote %s: set base_url, then run rsgen build\n", config.FileName)
	return exitOK
}
