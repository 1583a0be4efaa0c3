// Command bench measures rsgen against the floor of the machine it runs on:
// what a plain Go program needs to read and hash, or only walk and stat, the
// same synthetic tree in the same run (issue 6), and walk and stat with
// every core (issue 37).
//
// It generates deterministic trees into a work folder, once: (a) 100,000
// files of log-normal sizes around 8 KiB, about 800 MB; (b) 1,000,000
// files around 1 KiB; names with spaces and non-ASCII letters, folders of
// 100 entries. It builds rsgen from this module and times it as a child
// process, taking CPU time and peak RSS from the child's rusage: a cold
// build, a rebuild with no change (checking that no output file was
// rewritten), a rebuild after touching 1% of the files and one after
// changing 1% of them. It also writes the Resource List in process to
// measure entries per second. Every measurement reports its user and
// system time beside its wall time, and the cores it kept busy. With
// --procs N,M the parallel floors and rsgen's builds are measured at each
// GOMAXPROCS. With --runs N every measurement is repeated N times and the
// median reported, as a table and, with --json, as JSON.
//
// Usage, from the repository:
//
//	go run ./bench                      # both trees, one run each
//	go run ./bench --runs 3             # medians of three: steadier
//	go run ./bench --procs 1,2,16       # at three GOMAXPROCS
//	go run ./bench --tiny               # what CI runs
//
// The caches are warm: every measurement reads a tree that the previous
// one read (and an untimed pass reads it first), because dropping the page
// cache needs root. The figures are therefore CPU and system-call costs,
// not disk speed, for rsgen and the floor alike.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

func main() {
	if os.Getenv(launcherEnv) != "" {
		serveLauncher(os.Stdin, os.Stdout)
		return
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// options are the harness's flags.
type options struct {
	dir     string
	trees   []treeSpec
	runs    int
	procs   []int // --procs: the GOMAXPROCS to measure at, in order
	history int
	copied  string // --copied-out
	json    string
	rsgen   string // --rsgen: a binary to measure instead of this module's
}

const usage = `usage: go run ./bench [flags]

Generates synthetic trees (once), measures the floor and rsgen on them, and
prints the results.

flags:
  --dir DIR      work folder for the trees and builds (default %s)
  --trees LIST   trees to measure, of a (100,000 files, ~800 MB), b
                 (1,000,000 files, ~1 GB) and c (10,000,000 tiny files, a disk
                 block each: ~40 GB of disk; opt-in) (default a,b)
  --c-files N    the number of files of tree c (default 10,000,000), to
                 measure the largest tree a machine holds
  --tiny         measure only a tiny tree of 2,000 files, as CI does
  --runs N       repeat each measurement N times and report the median (default 1)
  --procs N[,M,...]
                 measure the parallel floors and rsgen's builds at each of
                 these GOMAXPROCS, in the harness and in rsgen's environment
                 (default: the harness's GOMAXPROCS, %d)
  --history N    then build each tree with kept versions, Change Dumps and
                 archives on, and N times more with 1%% changed before each,
                 and report how the peak RSS grows with the past events
                 (default 0: not measured)
  --copied-out DIR
                 then build each tree into a folder of DIR, which must be on
                 another file system than --dir (/dev/shm), where rsgen copies
                 the resources instead of hard-linking them: a cold build and
                 a --verify rebuild (default: not measured)
  --rsgen BIN    measure this rsgen binary instead of compiling this
                 module's (an older commit's, say, for a before and after on
                 one machine, against the same floors and trees)
  --json FILE    also write the results as JSON into FILE
  --sync         measure rsgen sync instead (see sync.go): each tree built,
                 served by rsgen serve and mirrored by a plain parallel GET
                 and by rsgen sync, then again after 1%% changed
  --sync-jobs N  the fetches in flight of --sync, for both (default 8)
`

// run is the harness: it parses args, measures, and reports. It returns
// the exit code: 0, 1 on failure, 2 on a usage error.
func run(args []string, stdout, stderr io.Writer) int {
	defaultDir := filepath.Join(os.TempDir(), "rsgen-bench")
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	defaultProcs := runtime.GOMAXPROCS(0)
	fs.Usage = func() { fmt.Fprintf(stderr, usage, defaultDir, defaultProcs) }
	var o options
	var trees, procs string
	var tiny, syncBench bool
	syncJobs := 8
	cFiles := treeC.Files
	fs.StringVar(&o.dir, "dir", defaultDir, "")
	fs.StringVar(&trees, "trees", "a,b", "")
	fs.BoolVar(&tiny, "tiny", false, "")
	fs.IntVar(&cFiles, "c-files", cFiles, "")
	fs.IntVar(&o.runs, "runs", 1, "")
	fs.StringVar(&procs, "procs", strconv.Itoa(defaultProcs), "")
	fs.IntVar(&o.history, "history", 0, "")
	fs.StringVar(&o.copied, "copied-out", "", "")
	fs.StringVar(&o.json, "json", "", "")
	fs.StringVar(&o.rsgen, "rsgen", "", "")
	fs.BoolVar(&syncBench, "sync", false, "")
	fs.IntVar(&syncJobs, "sync-jobs", syncJobs, "")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 || o.runs < 1 || o.history < 0 || cFiles < 1 {
		fs.Usage()
		return 2
	}
	var err error
	if o.procs, err = parseProcs(procs); err != nil {
		fmt.Fprintf(stderr, "bench: --procs: %v\n", err)
		return 2
	}
	if o.copied != "" {
		if err := checkCopiedOut(o.copied, o.dir); err != nil {
			fmt.Fprintf(stderr, "bench: --copied-out: %v\n", err)
			return 2
		}
	}
	if o.rsgen != "" {
		if err := checkBinary(o.rsgen); err != nil {
			fmt.Fprintf(stderr, "bench: --rsgen: %v\n", err)
			return 2
		}
	}
	if tiny {
		o.trees = []treeSpec{treeTiny}
	} else {
		for name := range strings.SplitSeq(trees, ",") {
			switch strings.TrimSpace(name) {
			case "a":
				o.trees = append(o.trees, treeA)
			case "b":
				o.trees = append(o.trees, treeB)
			case "c":
				c := treeC
				c.Files = cFiles
				o.trees = append(o.trees, c)
			default:
				fmt.Fprintf(stderr, "bench: unknown tree %q (want a, b or c)\n", name)
				return 2
			}
		}
	}
	logf := func(format string, args ...any) { fmt.Fprintf(stderr, "bench: "+format+"\n", args...) }
	if syncBench {
		return runSync(o, syncJobs, stdout, stderr, logf)
	}
	rep, err := measure(o, logf)
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	rep.writeTable(stdout)
	if o.json != "" {
		if err := rep.writeJSON(o.json); err != nil {
			fmt.Fprintf(stderr, "bench: %v\n", err)
			return 1
		}
	}
	return 0
}

// parseProcs parses --procs: GOMAXPROCS values, at least 1 each, separated
// by commas, none twice.
func parseProcs(list string) ([]int, error) {
	var procs []int
	for field := range strings.SplitSeq(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a number of cores (want N[,M,...], each at least 1)", field)
		}
		if slices.Contains(procs, n) {
			return nil, fmt.Errorf("%d is given twice", n)
		}
		procs = append(procs, n)
	}
	return procs, nil
}
