package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"github.com/rsgen/rsgen/internal/sysfile"
)

// benchBaseURL is the base URL of every benchmark build.
const benchBaseURL = "https://bench.example.org/"

// rsgenBinary returns the binary to measure: --rsgen's, made absolute,
// or else this module's, compiled into o.dir.
func rsgenBinary(o options) (string, error) {
	if o.rsgen != "" {
		return filepath.Abs(o.rsgen)
	}
	return buildRsgen(o.dir)
}

// launchRsgen makes the work folder o.dir and starts a launcher of the
// binary to measure (rsgenBinary).
func launchRsgen(o options) (*launcher, error) {
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return nil, err
	}
	bin, err := rsgenBinary(o)
	if err != nil {
		return nil, err
	}
	return startLauncher(bin)
}

// checkBinary reports why bin cannot be run as rsgen: it must be an
// executable regular file.
func checkBinary(bin string) error {
	info, err := os.Stat(bin)
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() || info.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", bin)
	}
	return nil
}

// buildRsgen compiles rsgen from this module into dir and returns the
// binary's path.
func buildRsgen(dir string) (string, error) {
	bin := filepath.Join(dir, "rsgen")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/rsgen/rsgen/cmd/rsgen")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build rsgen: %v\n%s", err, out)
	}
	return bin, nil
}

// childRun is what one rsgen process cost.
type childRun struct {
	Wall      time.Duration
	User, Sys time.Duration
	PeakRSS   int64 // bytes; 0 where the rusage does not say (see peakRSS)
	Stdout    string
}

// runChild runs bin with args and measures it from the outside: wall time,
// and CPU time and peak RSS from the child's rusage. With procs > 0 the
// child runs with GOMAXPROCS=procs in its environment.
func runChild(bin string, procs int, args ...string) (childRun, error) {
	cmd := exec.Command(bin, args...)
	if procs > 0 {
		cmd.Env = append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(procs))
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return childRun{}, fmt.Errorf("%s %v: %v\n%s", filepath.Base(bin), args, err, stderr.Bytes())
	}
	ps := cmd.ProcessState
	return childRun{
		Wall:    wall,
		User:    ps.UserTime(),
		Sys:     ps.SystemTime(),
		PeakRSS: peakRSS(ps),
		Stdout:  stdout.String(),
	}, nil
}

// buildArgs returns the arguments of a build of t at time now.
func buildArgs(t *tree, now time.Time) []string {
	return []string{"build",
		"--source", t.src,
		"--out", filepath.Join(t.root, "out"),
		"--state", filepath.Join(t.root, "state"),
		"--base-url", benchBaseURL,
		"--now", now.Format(time.RFC3339),
	}
}

var (
	readPattern   = regexp.MustCompile(`read (\d+) files`)
	eventsPattern = regexp.MustCompile(`(\d+) created, (\d+) updated, (\d+) deleted`)
)

// buildCounts returns, from rsgen build's summary line, how many files it
// read and how many change events it published; -1 where the line does
// not say.
func buildCounts(stdout string) (read, events int) {
	read, events = -1, -1
	if m := readPattern.FindStringSubmatch(stdout); m != nil {
		read, _ = strconv.Atoi(m[1])
	}
	if m := eventsPattern.FindStringSubmatch(stdout); m != nil {
		events = 0
		for _, s := range m[1:] {
			n, _ := strconv.Atoi(s)
			events += n
		}
	}
	return read, events
}

// stamp is what tells a rewritten output file: a rename gives it another
// inode, a write another mtime.
type stamp struct {
	path  string
	mtime int64
	ino   uint64
	size  int64
}

// stampOutputs returns the stamps of every file under dir, in lexical
// order.
func stampOutputs(dir string) ([]stamp, error) {
	var stamps []stamp
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		s := stamp{path: p, mtime: info.ModTime().UnixNano(), size: info.Size()}
		s.ino = sysfile.Inode(info)
		stamps = append(stamps, s)
		return nil
	})
	return stamps, err
}

// rewritten counts the files of after that are not in before or differ
// from it, and the files of before that are gone. Both are in lexical
// order.
func rewritten(before, after []stamp) int {
	n, i, j := 0, 0, 0
	for i < len(before) && j < len(after) {
		switch {
		case before[i].path < after[j].path:
			n++
			i++
		case before[i].path > after[j].path:
			n++
			j++
		default:
			if before[i] != after[j] {
				n++
			}
			i++
			j++
		}
	}
	return n + len(before) - i + len(after) - j
}

// removeBuild removes the output and state of earlier builds of t.
func removeBuild(t *tree) error {
	for _, d := range []string{"out", "state"} {
		if err := os.RemoveAll(filepath.Join(t.root, d)); err != nil {
			return err
		}
	}
	return nil
}
