package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/rsgen/rsgen/internal/freeport"
)

// scriptCmds are the custom commands of the testscripts: handshakes with
// background commands, and small helpers the builtins lack.
var scriptCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	"waitfile": cmdWaitfile,
	"mkfiles":  cmdMkfiles,
	"http":     cmdHTTP,
	"freeport": cmdFreeport,
}

// cmdFreeport sets the variable NAME to a loopback port that is free and
// outside the ephemeral range, for a script that starts servers on one
// port in turn: a port that one server let go of, in the ephemeral
// range, may be taken by any outgoing connection before the next binds it.
func cmdFreeport(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: freeport NAME")
	}
	port, err := freeport.Find()
	ts.Check(err)
	ts.Setenv(args[0], strconv.Itoa(port))
}

// waitfileTimeout bounds waitfile unless the script gives a timeout.
const waitfileTimeout = 30 * time.Second

// cmdWaitfile waits until FILE exists and its content matches REGEXP: the
// handshake with a background rsgen watch or serve, which rewrite their
// ready file atomically. Named groups of REGEXP set environment variables
// of the same name to what they matched.
func cmdWaitfile(ts *testscript.TestScript, neg bool, args []string) {
	const usage = "usage: waitfile FILE REGEXP [TIMEOUT]"
	if neg {
		ts.Fatalf("waitfile does not support negation; %s", usage)
	}
	if len(args) < 2 || len(args) > 3 {
		ts.Fatalf("%s", usage)
	}
	re, err := regexp.Compile(args[1])
	ts.Check(err)
	timeout := waitfileTimeout
	if len(args) == 3 {
		timeout, err = time.ParseDuration(args[2])
		ts.Check(err)
	}
	path := ts.MkAbs(args[0])
	deadline := time.Now().Add(timeout)
	var last string
	for {
		data, err := os.ReadFile(path)
		if err == nil {
			last = string(data)
			if m := re.FindStringSubmatch(last); m != nil {
				for i, name := range re.SubexpNames() {
					if name != "" {
						ts.Setenv(name, m[i])
					}
				}
				return
			}
		}
		if time.Now().After(deadline) {
			ts.Fatalf("waitfile: %s did not match %q within %s; last content: %q", args[0], args[1], timeout, last)
		}
		time.Sleep(10 * time.Millisecond) // polling interval of a bounded wait on a condition
	}
}

// cmdMkfiles writes N small files DIR/fNNNN.txt, as fast as it can.
func cmdMkfiles(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: mkfiles DIR N")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	dir := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(dir, 0o755))
	for i := range n {
		name := fmt.Sprintf("f%04d.txt", i)
		ts.Check(os.WriteFile(filepath.Join(dir, name), []byte(name+"\n"), 0o644))
	}
}

// cmdHTTP sends a request and prints the status line, the response
// headers sorted ("Name: value", one per line, Date left out), an empty
// line and the body.
func cmdHTTP(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: http METHOD URL ['Name: value' ...]")
	}
	req, err := http.NewRequest(args[0], args[1], nil)
	ts.Check(err)
	for _, h := range args[2:] {
		k, v, ok := strings.Cut(h, ": ")
		if !ok {
			ts.Fatalf("http: header %q: want 'Name: value'", h)
		}
		if k == "Host" {
			req.Host = v // net/http sends req.Host, not the header
		}
		req.Header.Set(k, v)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Do(req)
	ts.Check(err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	ts.Check(err)
	var lines []string
	for k, vs := range resp.Header {
		if k == "Date" {
			continue
		}
		for _, v := range vs {
			lines = append(lines, k+": "+v)
		}
	}
	slices.Sort(lines)
	fmt.Fprintf(ts.Stdout(), "%s\n%s\n\n%s", resp.Status, strings.Join(lines, "\n"), body)
}
