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
// reading slower than writeChunk per WriteIdle is dropped.
const writeChunk = 64 << 10

// maxRefusing bounds the refusals under way at once (each waits up to a
// second for the client to read its answer); past it, a client beyond the
// limit gets the answer and an immediate close.
const maxRefusing = 64

// silentGrace is how long a new connection may stay silent before a new
// client at the limit may take its place: real clients send their request
// at once, so silent connections cannot keep them out for long.
const silentGrace = time.Second

// limitListener admits at most max connections at once. At the limit, a
// new connection takes the place of the connection idle the longest, or
// else of the one silent the longest since it was opened (past
// silentGrace), or is answered 503 and closed when there is none. It
// learns the state of its connections from the http.Server's ConnState
// hook (setState).
type limitListener struct {
	net.Listener
	max                    int
	writeIdle, silentGrace time.Duration

	mu       sync.Mutex
	conns    map[*conn]connInfo
	changed  chan struct{} // closed and replaced whenever conns changes
	refusing chan struct{} // a token per refusal under way
}

// connInfo is what the listener knows of one of its connections.
type connInfo struct {
	state http.ConnState
	since time.Time // of the state
}

func newLimitListener(ln net.Listener, max int) *limitListener {
	return &limitListener{Listener: ln, max: max, writeIdle: WriteIdle, silentGrace: silentGrace,
		conns: map[*conn]connInfo{}, changed: make(chan struct{}), refusing: make(chan struct{}, maxRefusing)}
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

// admit tracks nc when there is room for it, closing the connection idle
// the longest to make some, and returns nil when there is none.
func (l *limitListener) admit(nc net.Conn) *conn {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.conns) >= l.max {
		victim := l.victim()
		if victim == nil {
			return nil
		}
		// The server sees the connection fail and closes it, which
		// forgets it again; a client that was about to reuse it retries
		// on a new one, as after IdleTimeout.
		delete(l.conns, victim)
		victim.Conn.Close()
	}
	c := &conn{Conn: nc, l: l}
	l.conns[c] = connInfo{state: http.StateNew, since: time.Now()}
	l.signal()
	return c
}

// victim returns the connection idle the longest, else the one silent
// the longest past silentGrace, or nil.
func (l *limitListener) victim() *conn {
	var idle, silent *conn
	var idleSince, silentSince time.Time
	for c, info := range l.conns {
		switch {
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
		delete(l.conns, c)
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
		delete(l.conns, c)
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
// extended while bytes flow.
type conn struct {
	net.Conn
	l *limitListener
}

func (c *conn) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		if err := c.Conn.SetWriteDeadline(time.Now().Add(c.l.writeIdle)); err != nil {
			return n, err
		}
		k, err := c.Conn.Write(p[:min(len(p), writeChunk)])
		n += k
		if err != nil {
			return n, err
		}
		p = p[k:]
	}
	return n, nil
}

func (c *conn) Close() error {
	c.l.forget(c)
	return c.Conn.Close()
}
