package freeport

import (
	"fmt"
	"net"
	"testing"
)

// TestGet checks that the ports are distinct, below the ephemeral range,
// and bindable.
func TestGet(t *testing.T) {
	seen := map[int]bool{}
	top := ephemeralStart()
	for range 50 {
		port := Get(t)
		if port < lowest || port >= top {
			t.Fatalf("port %d is outside %d..%d", port, lowest, top-1)
		}
		if seen[port] {
			t.Fatalf("port %d handed out twice", port)
		}
		seen[port] = true
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			t.Fatalf("port %d: %v", port, err)
		}
		l.Close()
	}
}

// TestHeldPortIsNotBindable checks the test Get relies on to skip a port
// another process holds.
func TestHeldPortIsNotBindable(t *testing.T) {
	port := Get(t)
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	if bindable(port) {
		t.Errorf("port %d is held by a listener but reported bindable", port)
	}
	l.Close()
	if !bindable(port) {
		t.Errorf("port %d was released but is reported not bindable", port)
	}
}
