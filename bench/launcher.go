package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
)

// On Linux a child's peak RSS (ru_maxrss) starts from the peak RSS of the
// process that executed it: Go starts a child with vfork, and exec records
// the memory it leaves. By the 1% steps the harness holds the stamps of
// every output file, and a child it started itself reported the
// harness's memory, not its own (487 MiB for a rebuild of a million files
// that peaks at 308 MB). So rsgen is started by a launcher: a copy of the
// harness started before the harness grows, which only starts children
// and reports what their rusage says.

// launcherEnv, set in its environment, makes the harness a launcher.
const launcherEnv = "RSGEN_BENCH_LAUNCHER"

// launcher is the harness's connection to its launcher process.
type launcher struct {
	bin string // rsgen
	cmd *exec.Cmd
	mu  sync.Mutex
	in  io.WriteCloser
	enc *json.Encoder
	dec *json.Decoder
}

type launchRequest struct {
	Bin   string
	Procs int // the child's GOMAXPROCS; 0 leaves it to the child
	Args  []string
}

type launchReply struct {
	Run childRun
	Err string
}

// startLauncher starts a launcher of the rsgen binary bin: the running
// executable, with launcherEnv set (see serveLauncher).
func startLauncher(bin string) (*launcher, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("start the launcher: %w", err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), launcherEnv+"=1")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the launcher: %w", err)
	}
	return &launcher{bin: bin, cmd: cmd, in: in, enc: json.NewEncoder(in), dec: json.NewDecoder(out)}, nil
}

// run runs rsgen with args in the launcher, with GOMAXPROCS=procs in its
// environment when procs > 0.
func (l *launcher) run(procs int, args ...string) (childRun, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.enc.Encode(launchRequest{Bin: l.bin, Procs: procs, Args: args}); err != nil {
		return childRun{}, fmt.Errorf("launcher: %w", err)
	}
	var reply launchReply
	if err := l.dec.Decode(&reply); err != nil {
		return childRun{}, fmt.Errorf("launcher: %w", err)
	}
	if reply.Err != "" {
		return childRun{}, fmt.Errorf("%s", reply.Err)
	}
	return reply.Run, nil
}

// close ends the launcher.
func (l *launcher) close() error {
	l.in.Close()
	return l.cmd.Wait()
}

// serveLauncher is the launcher: it runs each request it reads from in
// and writes what it measured to out, until in ends.
func serveLauncher(in io.Reader, out io.Writer) {
	dec, enc := json.NewDecoder(in), json.NewEncoder(out)
	for {
		var req launchRequest
		if err := dec.Decode(&req); err != nil {
			return
		}
		var reply launchReply
		r, err := runChild(req.Bin, req.Procs, req.Args...)
		if err != nil {
			reply.Err = err.Error()
		}
		reply.Run = r
		if err := enc.Encode(reply); err != nil {
			return
		}
	}
}
