package serve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// # The server
//
// A preview server runs for days on a laptop or a CI runner, open to
// whatever else runs there, so it bounds what clients can hold:
//
//   - at most MaxConns connections at once (file descriptors are finite),
//     and at most MaxConnsPerClient from one IP address (one IPv6 /64), so
//     that one client cannot take them all: browsers open 6 to a host,
//     rsgen check 4; a new connection beyond either limit takes the place
//     of the longest idle keep-alive connection (of that client, at its
//     own limit), or of a connection silent for a second since it opened
//     (real clients send their request at once), or is refused with 503
//     Service Unavailable, never left hanging;
//   - ReadHeaderTimeout for a request's head, IdleTimeout between the
//     requests of a keep-alive connection;
//   - no overall write timeout, which would cut a 1 GiB dump package on
//     a slow link, but a minimum rate: a client must read at MinRate on
//     average over the time the server spends writing to it, with
//     RateGrace of slack, or it is dropped. A bound on each write alone
//     (nginx's send_timeout) does not do: 512 clients reading 100 bytes a
//     second, each pipelining requests for small files, kept every
//     connection busy for good, since each small answer is read within
//     the bound. 1 KiB/s is slower than any link in use (a 2G phone reads
//     10 to 30 KB/s), so a slow client still downloads a dump package of
//     any size, however long it takes; and a client that stops reading is
//     dropped after WriteIdle.

// Limits of a Server.
const (
	MaxConns          = 512
	MaxConnsPerClient = 32
	ReadHeaderTimeout = 10 * time.Second
	IdleTimeout       = 60 * time.Second
	WriteIdle         = 30 * time.Second
	MinRate           = 1 << 10 // bytes a second
	RateGrace         = 30 * time.Second
)

// Server serves a Handler over HTTP in the background. Create it with
// Start.
type Server struct {
	srv  *http.Server
	ln   *limitListener
	done chan struct{} // closed when Serve returned
	err  error         // what Serve returned
}

// Start listens on addr and serves h in the background, for the names
// addr gives (see host.go).
func Start(addr string, h *Handler) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	h.listenAs(addr, ln.Addr())
	return serveOn(newLimitListener(ln, MaxConns), h), nil
}

// serveOn serves h on ln in the background.
func serveOn(ln *limitListener, h *Handler) *Server {
	s := &Server{
		srv: &http.Server{
			Handler:           h,
			ReadHeaderTimeout: ReadHeaderTimeout,
			IdleTimeout:       IdleTimeout,
			MaxHeaderBytes:    64 << 10,
			ConnState:         ln.setState,
		},
		ln:   ln,
		done: make(chan struct{}),
	}
	s.srv.RegisterOnShutdown(h.CloseStreams)
	go func() {
		s.err = s.srv.Serve(ln)
		close(s.done)
	}()
	return s
}

// Addr returns the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Done is closed when the server stopped, by Shutdown or by an error that
// Err then returns.
func (s *Server) Done() <-chan struct{} { return s.done }

// Err returns the error that stopped the server, once Done is closed;
// nil after Shutdown.
func (s *Server) Err() error {
	<-s.done
	if errors.Is(s.err, http.ErrServerClosed) {
		return nil
	}
	return s.err
}

// Shutdown stops the server once the requests in progress are answered
// (live-reload streams end at once), or when ctx is done.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if serr := s.Err(); err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("stop server: %w", err)
	}
	return nil
}
