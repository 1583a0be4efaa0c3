package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/rsgen/rsgen/config"
)

var initCommand = &command{
	name:     "init",
	summary:  "start a site: a folder, its site/ folder and a commented rsgen.toml",
	synopsis: "[DIR] [flags]",
	about: `Makes DIR (the working folder by default) ready to build: creates it if need
be, with a site/ folder for the files to publish and rsgen.toml, every key
commented and set to its default, base_url commented out. Set base_url, put
files into site/, then run "rsgen build".`,
	more: `examples:
  rsgen init
  rsgen init my-source && cd my-source`,
	flags:   func() (*flag.FlagSet, any) { f := newInitFlags(); return f.fs, f },
	maxArgs: 1,
	run:     runInit,
}

// initFlags are the flags of rsgen init.
type initFlags struct {
	fs    *flag.FlagSet
	force bool
}

func newInitFlags() *initFlags {
	f := &initFlags{fs: flag.NewFlagSet("init", flag.ContinueOnError)}
	f.fs.BoolVar(&f.force, "force", false, "overwrite an existing rsgen.toml")
	return f
}

func runInit(_ context.Context, cio cliIO, values any, args []string) int {
	f := values.(*initFlags)
	dir := "."
	if len(args) == 1 {
		dir = args[0]
	}
	for _, d := range []string{dir, filepath.Join(dir, "site")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			fmt.Fprintf(cio.stderr, "rsgen init: %v\n", err)
			return exitFailure
		}
	}
	path := filepath.Join(dir, config.FileName)
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if f.force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	file, err := os.OpenFile(path, flags, 0o644)
	if errors.Is(err, fs.ErrExist) {
		fmt.Fprintf(cio.stderr, "rsgen init: %s already exists (use --force to overwrite it)\n", path)
		return exitFailure
	}
	if err == nil {
		_, err = file.WriteString(config.Example)
		if cerr := file.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(cio.stderr, "rsgen init: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(cio.stdout, "wrote %s and the folder %s for the files to publish: set base_url in %s, then run rsgen build\n",
		path, filepath.Join(dir, "site")+string(filepath.Separator), config.FileName)
	return exitOK
}
