package serve

import (
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// writeChunk is the most bytes written under one write deadline: a client
// that takes WriteIdle to read writeChunk bytes (546 bytes a second) has
// stalled, and is dropped. It is small enough that MinRate, a higher rate,
// is the bound a client that reads steadily meets.
const writeChunk = 16 << 10

// maxRefusing bounds the refusals under way at once (each waits up to a
// second for the client to read its answer); past it, a client beyond the
// limit gets the answer and an immediate close.
const maxRefusing = 64

// silentGrace is how long a new connection may stay silent before a new
// client at the limit may take its place: real clients send their request
// at once, so silent connections cannot keep them out for long.
const silentGrace = time.Second

// limitListener admits at most max connections at once, and at most
// maxPerClient from one client (clientOf). At either limit, a new
// connection takes the place of the connection idle the longest (of that
// client, at its limit), or else of the one silent the longest since it
// was opened (past silentGrace), or is answered 503 and closed when there
// is none. It learns the state of its connections from the http.Server's
// ConnState hook (setState). Its connections are dropped when they read
// slower than minRate (see conn.Write).
type limitListener struct {
	net.Listener
	max, maxPerClient      int
	writeIdle, silentGrace time.Duration
	minRate                int64 // bytes a second
	rateGrace              time.Duration

	mu       sync.Mutex
	conns    map[*conn]connInfo
	clients  map[string]int // connections by client
	changed  chan struct{}  // closed and replaced whenever conns changes
	refusing chan struct{}  // a token per refusal under way
}

// connInfo is what the listener knows of one of its connections.
type connInfo struct {
	state http.ConnState
	since time.Time // of the state
}

func newLimitListener(ln net.Listener, max int) *limitListener {
	return &limitListener{Listener: ln, max: max, maxPerClient: MaxConnsPerClient,
		writeIdle: WriteIdle, silentGrace: silentGrace, minRate: MinRate, rateGrace: RateGrace,
		conns: map[*conn]connInfo{}, clients: map[string]int{}, changed: make(chan struct{}), refusing: make(chan struct{}, maxRefusing)}
}

// clientOf returns the client a connection from addr counts against: its
// IP address, or for IPv6 its /64 network, which one machine commonly
// holds whole.
func clientOf(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return addr.String()
	}
	if tcp.IP.To4() == nil {
		return tcp.IP.Mask(net.CIDRMask(64, 128)).String() + "/64"
	}
	return tcp.IP.String()
}

// Accept returns the next connection the limit admits.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		nc, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if c := l.admit(nc); c != nil {
			return c, nil
		}
		l.refuse(nc)
	}
}

// admit tracks nc when there is room for it, within the limit of its
// client and the limit of all, closing the connection idle the longest to
// make some, and returns nil when there is none.
func (l *limitListener) admit(nc net.Conn) *conn {
	client := clientOf(nc.RemoteAddr())
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.clients[client] >= l.maxPerClient && !l.makeRoom(client) {
		return nil
	}
	if len(l.conns) >= l.max && !l.makeRoom("") {
		return nil
	}
	c := &conn{Conn: nc, l: l, client: client, due: l.rateGrace}
	l.conns[c] = connInfo{state: http.StateNew, since: time.Now()}
	l.clients[client]++
	l.signal()
	return c
}

// makeRoom closes the victim among the connections of client ("" for
// all), and reports whether there was one.
func (l *limitListener) makeRoom(client string) bool {
	victim := l.victim(client)
	if victim == nil {
		return false
	}
	// The server sees the connection fail and closes it, which forgets
	// it again; a client that was about to reuse it retries on a new one,
	// as after IdleTimeout.
	l.remove(victim)
	victim.Conn.Close()
	return true
}

// remove stops tracking c; the caller holds mu.
func (l *limitListener) remove(c *conn) {
	delete(l.conns, c)
	if l.clients[c.client]--; l.clients[c.client] <= 0 {
		delete(l.clients, c.client)
	}
}

// victim returns, among the connections of client ("" for all), the one
// idle the longest, else the one silent the longest past silentGrace, or
// nil.
func (l *limitListener) victim(client string) *conn {
	var idle, silent *conn
	var idleSince, silentSince time.Time
	for c, info := range l.conns {
		switch {
		case client != "" && c.client != client:
		case info.state == http.StateIdle && (idle == nil || info.since.Before(idleSince)):
			idle, idleSince = c, info.since
		case info.state == http.StateNew && time.Since(info.since) >= l.silentGrace && (silent == nil || info.since.Before(silentSince)):
			silent, silentSince = c, info.since
		}
	}
	if idle != nil {
		return idle
	}
	return silent
}

// setState is the http.Server's ConnState hook.
func (l *limitListener) setState(nc net.Conn, state http.ConnState) {
	c, ok := nc.(*conn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, tracked := l.conns[c]; !tracked {
		return // closed, or evicted
	}
	switch state {
	case http.StateHijacked, http.StateClosed:
		l.remove(c)
	default:
		l.conns[c] = connInfo{state: state, since: time.Now()}
	}
	l.signal()
}

// forget stops tracking c.
func (l *limitListener) forget(c *conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, tracked := l.conns[c]; tracked {
		l.remove(c)
		l.signal()
	}
}

// signal wakes up whoever waits on changed; the caller holds mu.
func (l *limitListener) signal() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// refuse answers a connection beyond the limit 503, and closes it in the
// background once the client had a chance to read the answer.
func (l *limitListener) refuse(nc net.Conn) {
	nc.SetWriteDeadline(time.Now().Add(time.Second))
	io.WriteString(nc, unavailable)
	select {
	case l.refusing <- struct{}{}:
		go func() {
			defer func() { <-l.refusing }()
			closeAfterRead(nc)
		}()
	default:
		nc.Close()
	}
}

// unavailable is the whole answer to a connection beyond the limit.
var unavailable = func() string {
	const body = "too many connections; retry in a moment\n"
	return "HTTP/1.1 503 Service Unavailable\r\n" +
		"Content-Type: text/plain; charset=utf-8\r\nRetry-After: 1\r\nConnection: close\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
}()

// closeAfterRead closes nc once the client closed its side or after a
// second, discarding what it sends meanwhile (its request): a connection
// closed with unread input is reset, which can destroy the answer before
// the client reads it.
func closeAfterRead(nc net.Conn) {
	defer nc.Close()
	if tcp, ok := nc.(*net.TCPConn); ok {
		tcp.CloseWrite()
	}
	nc.SetReadDeadline(time.Now().Add(time.Second))
	io.Copy(io.Discard, io.LimitReader(nc, 64<<10))
}

// conn is a connection of a limitListener. Each write has a deadline,
// extended while bytes flow, as long as they flow at minRate.
type conn struct {
	net.Conn
	l      *limitListener
	client string // clientOf its remote address
	// spent is the time spent writing so far, and due the time of
	// writing by which the bytes written so far are owed at minRate: a
	// client may fall behind by what it gained, up to rateGrace, and no
	// more (see allowance). Only the server's goroutine of the connection
	// writes.
	spent, due time.Duration
}

// Write writes p in chunks of at most writeChunk bytes, each under a
// deadline of its allowance.
func (c *conn) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		chunk := p[:min(len(p), writeChunk)]
		start := time.Now()
		if err := c.Conn.SetWriteDeadline(start.Add(c.allowance(len(chunk)))); err != nil {
			return n, err
		}
		k, err := c.Conn.Write(chunk)
		c.spent += time.Since(start)
		n += k
		if err != nil {
			return n, err
		}
		p = p[k:]
	}
	return n, nil
}

// allowance returns how long a write of n bytes may take: what n bytes
// take at minRate, plus the time the client gained by reading faster
// before (at most rateGrace), less what it lost reading slower, and never
// more than writeIdle. It is a token bucket over the time spent writing:
// a client that reads steadily at minRate or faster is never dropped, one
// that reads slower is dropped once it fell rateGrace behind, however
// small the writes (nginx's send_timeout, a bound on each write alone,
// lets a client that reads 100 bytes a second keep a connection for good
// by pipelining small requests), and one that stops reading is dropped
// after writeIdle.
func (c *conn) allowance(n int) time.Duration {
	c.due = min(c.due, c.spent+c.l.rateGrace) + time.Duration(n)*time.Second/time.Duration(c.l.minRate)
	return min(c.l.writeIdle, c.due-c.spent)
}

func (c *conn) Close() error {
	c.l.forget(c)
	return c.Conn.Close()
}
