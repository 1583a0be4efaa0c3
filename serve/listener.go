package serve

import (
	"bufio"
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

// maxRefusing bounds the refusals answered at once; past it, a client
// beyond the limit is disconnected without an answer.
const maxRefusing = 64

// limitListener admits at most max connections at once. At the limit, a
// new connection takes the place of the connection idle the longest, or
// is answered 503 and closed when none is idle. It learns the state of
// its connections from the http.Server's ConnState hook (setState).
type limitListener struct {
	net.Listener
	max       int
	writeIdle time.Duration

	mu       sync.Mutex
	conns    map[*conn]connInfo
	changed  chan struct{} // closed and replaced whenever conns changes
	refusing chan struct{} // a token per refusal under way
}

// connInfo is what the listener knows of one of its connections.
type connInfo struct {
	state     http.ConnState
	idleSince time.Time
}

func newLimitListener(ln net.Listener, max int) *limitListener {
	return &limitListener{Listener: ln, max: max, writeIdle: WriteIdle,
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
		victim := l.longestIdle()
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
	l.conns[c] = connInfo{state: http.StateNew}
	l.signal()
	return c
}

// longestIdle returns the connection idle the longest, or nil.
func (l *limitListener) longestIdle() *conn {
	var victim *conn
	var since time.Time
	for c, info := range l.conns {
		if info.state == http.StateIdle && (victim == nil || info.idleSince.Before(since)) {
			victim, since = c, info.idleSince
		}
	}
	return victim
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
		l.conns[c] = connInfo{state: state, idleSince: time.Now()}
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

// refuse answers a connection beyond the limit in the background.
func (l *limitListener) refuse(nc net.Conn) {
	select {
	case l.refusing <- struct{}{}:
		go func() {
			defer func() { <-l.refusing }()
			answerUnavailable(nc)
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

// answerUnavailable answers 503 and closes nc. It reads the request's head
// first, for at most a second: a connection closed with unread input is
// reset, and the client would not see the answer.
func answerUnavailable(nc net.Conn) {
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(time.Second))
	br := bufio.NewReader(io.LimitReader(nc, 64<<10))
	for {
		line, err := br.ReadSlice('\n')
		if err != nil || len(line) <= 2 && (len(line) == 1 || line[0] == '\r') {
			break
		}
	}
	io.WriteString(nc, unavailable)
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
