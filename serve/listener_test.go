package serve

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// limitedServer serves a folder holding small.txt and a 64 MiB big.bin
// with at most max connections at once.
func limitedServer(t *testing.T, max int) (*limitListener, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "small.txt"), []byte("small"), 0o644); err != nil {
		t.Fatal(err)
	}
	big, err := os.Create(filepath.Join(dir, "big.bin"))
	if err == nil {
		err = big.Truncate(64 << 20)
	}
	if err == nil {
		err = big.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := newLimitListener(ln, max)
	srv := serveOn(l, h)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Error(err)
		}
		h.Close()
	})
	return l, ln.Addr().String()
}

// waitFor returns once cond, which reads the listener's connections, holds:
// a handshake on the listener's changes, not a guess at a duration.
func waitFor(t *testing.T, l *limitListener, what string, cond func(map[*conn]connInfo) bool) {
	t.Helper()
	timeout := time.After(time.Minute)
	for {
		l.mu.Lock()
		ok, changed := cond(l.conns), l.changed
		l.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("never %s", what)
		}
	}
}

func countState(conns map[*conn]connInfo, state http.ConnState) int {
	n := 0
	for _, info := range conns {
		if info.state == state {
			n++
		}
	}
	return n
}

// get sends one keep-alive request on a new connection, reads the
// response and returns the connection, left open.
func get(t *testing.T, addr, path string) (net.Conn, *http.Response) {
	t.Helper()
	return getFrom(t, &net.Dialer{}, addr, path)
}

// getFrom is get on a connection of d.
func getFrom(t *testing.T, d *net.Dialer, addr, path string) (net.Conn, *http.Response) {
	t.Helper()
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: localhost\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatal(err)
	}
	return c, resp
}

// TestIdleConnectionsMakeRoom: clients that keep idle connections open,
// many more than the limit, never keep a new client out: each new one
// takes the place of the connection idle the longest.
func TestIdleConnectionsMakeRoom(t *testing.T) {
	const max = 4
	l, addr := limitedServer(t, max)
	for i := range 5 * max {
		if _, resp := get(t, addr, "/small.txt"); resp.StatusCode != http.StatusOK {
			t.Fatalf("client %d: %s", i, resp.Status)
		}
		// Its connection is idle before the next client comes.
		waitFor(t, l, "idle", func(c map[*conn]connInfo) bool { return countState(c, http.StateIdle) == min(i+1, max) })
	}
	resp, err := http.Get("http://" + addr + "/small.txt")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("a new client: %s", resp.Status)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.conns) > max {
		t.Errorf("%d connections open, limit %d", len(l.conns), max)
	}
}

// TestSilentConnectionsRefuse: when every connection is busy (here opened
// and silent, within silentGrace), a new client is answered 503 at once,
// not left waiting; once they are gone, clients are served again.
func TestSilentConnectionsRefuse(t *testing.T) {
	const max = 4
	l, addr := limitedServer(t, max)
	l.silentGrace = time.Hour
	var silent []net.Conn
	for range max {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		silent = append(silent, c)
	}
	waitFor(t, l, "full", func(c map[*conn]connInfo) bool { return len(c) == max })
	_, resp := get(t, addr, "/small.txt")
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("a client beyond the limit: %s, Retry-After %q", resp.Status, resp.Header.Get("Retry-After"))
	}
	for _, c := range silent {
		c.Close()
	}
	waitFor(t, l, "empty", func(c map[*conn]connInfo) bool { return len(c) == 0 })
	if _, resp := get(t, addr, "/small.txt"); resp.StatusCode != http.StatusOK {
		t.Errorf("after the silent clients left: %s", resp.Status)
	}
}

// TestSilentConnectionsGiveWay: connections silent for longer than
// silentGrace (here 0) give way to new clients: a flood of silent
// connections cannot keep clients out.
func TestSilentConnectionsGiveWay(t *testing.T) {
	const max = 4
	l, addr := limitedServer(t, max)
	l.silentGrace = 0
	for i := range 3 * max {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		waitFor(t, l, "tracked", func(c map[*conn]connInfo) bool { return countState(c, http.StateNew) == min(i+1, max) })
	}
	if _, resp := get(t, addr, "/small.txt"); resp.StatusCode != http.StatusOK {
		t.Errorf("a client after a flood of silent connections: %s", resp.Status)
	}
}

// TestStalledReaderDropped: a client that stops reading a download is
// dropped once a write has waited writeIdle; the server has no overall
// write timeout that would cut a long download that flows.
func TestStalledReaderDropped(t *testing.T) {
	l, addr := limitedServer(t, 8)
	l.writeIdle = 50 * time.Millisecond
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "GET /big.bin HTTP/1.1\r\nHost: localhost\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, l, "answering", func(c map[*conn]connInfo) bool { return countState(c, http.StateActive) == 1 })
	waitFor(t, l, "dropped", func(c map[*conn]connInfo) bool { return len(c) == 0 })
	n, _ := io.Copy(io.Discard, c)
	if n >= 64<<20 {
		t.Errorf("read %d bytes: the whole file reached a client that stopped reading", n)
	}
}

// TestClientLimit: one client (here 127.0.0.2) cannot take more than
// maxPerClient connections, even with room left in all: its next one is
// answered 503, while another client is served; once one of its
// connections is gone, it is served again.
func TestClientLimit(t *testing.T) {
	const max, perClient = 8, 2
	l, addr := limitedServer(t, max)
	l.maxPerClient = perClient
	l.silentGrace = time.Hour
	other := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}
	var held []net.Conn
	for range perClient {
		c, err := other.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		held = append(held, c)
	}
	waitFor(t, l, "tracked", func(c map[*conn]connInfo) bool { return len(c) == perClient })
	if _, resp := getFrom(t, other, addr, "/small.txt"); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("the client at its limit: %s, want 503", resp.Status)
	}
	if _, resp := get(t, addr, "/small.txt"); resp.StatusCode != http.StatusOK {
		t.Errorf("another client: %s", resp.Status)
	}
	held[0].Close()
	waitFor(t, l, "one gone", func(c map[*conn]connInfo) bool { return l.clients["127.0.0.2"] < perClient })
	if _, resp := getFrom(t, other, addr, "/small.txt"); resp.StatusCode != http.StatusOK {
		t.Errorf("the client below its limit again: %s", resp.Status)
	}
}

// TestSlowReaderDropped: a client that reads steadily but slower than
// minRate (here 100 KB/s against 1 MiB/s) is dropped once it fell
// rateGrace behind, though each write makes progress well within
// writeIdle: reading slowly cannot hold a connection for good.
func TestSlowReaderDropped(t *testing.T) {
	l, addr := limitedServer(t, 8)
	l.writeIdle, l.minRate, l.rateGrace = time.Hour, 1<<20, 200*time.Millisecond
	c := askBig(t, addr, 4<<10)
	got := make(chan int64, 1)
	go func() {
		var n int64
		buf := make([]byte, 1<<10)
		for {
			k, err := c.Read(buf)
			n += int64(k)
			if err != nil {
				got <- n
				return
			}
			time.Sleep(10 * time.Millisecond) // about 100 KB/s
		}
	}()
	waitFor(t, l, "answering", func(c map[*conn]connInfo) bool { return countState(c, http.StateActive) == 1 })
	waitFor(t, l, "dropped", func(c map[*conn]connInfo) bool { return len(c) == 0 })
	c.Close() // what the server's socket still holds would take long to read
	if n := <-got; n >= 64<<20 {
		t.Errorf("read %d bytes: the whole file reached a client below the minimum rate", n)
	}
}

// TestSteadyReaderKept: a client that reads as fast as it can gets the
// whole file under the same minimum rate (loopback reads far faster).
func TestSteadyReaderKept(t *testing.T) {
	l, addr := limitedServer(t, 8)
	l.writeIdle, l.minRate, l.rateGrace = time.Hour, 256<<10, 5*time.Second
	c := askBig(t, addr, 0)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil || n != 64<<20 {
		t.Errorf("read %d bytes (%v), want the whole 64 MiB", n, err)
	}
}

// askBig opens a connection and asks for big.bin. A receive buffer of
// rcvbuf bytes, when not 0, makes the server's writes wait on the client's
// reads sooner.
func askBig(t *testing.T, addr string, rcvbuf int) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if rcvbuf > 0 {
		if err := c.(*net.TCPConn).SetReadBuffer(rcvbuf); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := io.WriteString(c, "GET /big.bin HTTP/1.1\r\nHost: localhost\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	return c
}
