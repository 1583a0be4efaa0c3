// Package freeport is test support: it finds loopback TCP ports for the
// real servers the tests start (versitygw, nginx, Apache), which must be
// told their port before they listen. Asking the kernel for port 0 and
// closing the listener is not enough: the port it returns comes from the
// ephemeral range, where the tests' own outgoing connections (thousands,
// in the deploy tests) take their local ports, and one of them can take
// the port before the server binds it. That failed CI once (stop 31:
// versitygw could not bind its port). This package picks ports below the
// ephemeral range, which outgoing connections never use.
package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"testing"
)

// lowest is the lowest port handed out: above the ports services
// conventionally use.
const lowest = 10000

// handedOut holds the ports given in this process, so that two servers
// of one test never get the same port.
var (
	mu        sync.Mutex
	handedOut = map[int]bool{}
)

// Get returns a port on 127.0.0.1 that is free now, below the kernel's
// ephemeral range and not handed out before in this process; it fails
// the test when there is none.
func Get(t testing.TB) int {
	t.Helper()
	port, err := Find()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// Find is Get for callers without a testing.TB (testscript commands).
func Find() (int, error) {
	top := ephemeralStart()
	mu.Lock()
	defer mu.Unlock()
	for range 1000 {
		port := lowest + rand.IntN(top-lowest)
		if handedOut[port] {
			continue
		}
		if !bindable(port) {
			continue // taken by another process
		}
		handedOut[port] = true
		return port, nil
	}
	return 0, fmt.Errorf("freeport: no free port found in %d..%d", lowest, top-1)
}

// bindable reports whether a listener can bind 127.0.0.1:port now.
func bindable(port int) bool {
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// ephemeralStart returns the first port of the kernel's ephemeral range,
// or Linux's default when the range cannot be read.
func ephemeralStart() int {
	start := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		var lo, hi int
		if n, _ := fmt.Sscan(string(b), &lo, &hi); n == 2 && lo > lowest+1000 {
			start = lo
		}
	}
	return start
}
