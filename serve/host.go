package serve

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// # Which names a server answers for
//
// A page on any site can make a browser send requests to a server on the
// browser's machine by giving its own name a loopback address (DNS
// rebinding): the requests then carry that site's name in Host, and the
// browser lets the page read the answers. A server that answers only the
// names it listens as leaves such a page nothing to read. A Handler
// answers requests whose Host names
//
//   - localhost or a name under .localhost, and a loopback address;
//   - the address it was told to listen on (Start), a name or an IP
//     address; and, when it listens on every address, any address of this
//     machine;
//   - the host of its base URL (configured, or published by the output),
//     so that a name mapped to this machine, as a staging name in
//     /etc/hosts, works.
//
// Others get 421 Misdirected Request. A request without a Host (HTTP/1.0)
// comes from no browser, and is answered.

// listenAddr is what a Handler's server listens as: the host of the
// address it was given, and the IP address it listens on.
type listenAddr struct {
	name string // the host given, lower case, when it is a name
	ip   net.IP // nil when unknown (a Handler served by another server)
}

// listenAs records the address h is served at: addr as given to Start,
// and the address its listener took.
func (h *Handler) listenAs(addr string, at net.Addr) {
	l := &listenAddr{}
	if host, _, err := net.SplitHostPort(addr); err == nil && net.ParseIP(host) == nil {
		l.name = canonicalHost(host)
	}
	if tcp, ok := at.(*net.TCPAddr); ok {
		l.ip = tcp.IP
	}
	h.listen = l
}

// answersFor reports whether h answers a request with Host hostport when
// its base URL is base ("" when none).
func (h *Handler) answersFor(hostport, base string) bool {
	if hostport == "" {
		return true
	}
	name := canonicalHost(hostport)
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		name = canonicalHost(host)
	}
	if ip := net.ParseIP(name); ip != nil {
		return ip.IsLoopback() || h.listen != nil && h.listen.ip != nil && reaches(ip, h.listen.ip)
	}
	switch {
	case name == "localhost" || strings.HasSuffix(name, ".localhost"):
		return true
	case h.listen != nil && name == h.listen.name && name != "":
		return true
	}
	if u, err := url.Parse(base); err == nil && base != "" {
		return canonicalHost(u.Hostname()) == name
	}
	return false
}

// canonicalHost returns a host name as compared: lower case, without the
// brackets of an IPv6 address or the dot that ends a fully qualified name.
func canonicalHost(host string) string {
	host = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSuffix(host, "]"), "["), ".")
	return strings.ToLower(host)
}

// misdirected answers a request for a name h does not answer for.
func misdirected(w http.ResponseWriter, host string) {
	http.Error(w, "misdirected request: this server does not answer for "+host+
		"; it answers for localhost, its loopback and listening addresses, and its base URL's host", http.StatusMisdirectedRequest)
}
