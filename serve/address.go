package serve

import (
	"context"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// SiteURL returns the URL at which a server listening on addr serves an
// output folder published at base (a base URL, with its trailing slash),
// and whether that URL is base itself: it is when a request for base
// reaches addr, that is, base is http:// on addr's port and its host is
// addr's IP address, or a name (localhost, or any that resolves) for it.
// Otherwise the URL is addr's with base's path, and the documents' links,
// which lead to base, do not lead to this server.
func SiteURL(base string, addr net.Addr) (string, bool) {
	tcp, _ := addr.(*net.TCPAddr)
	u, err := url.Parse(base)
	if tcp == nil || err != nil {
		return "http://" + addr.String() + "/", false
	}
	ip := tcp.IP
	if ip.IsUnspecified() {
		ip = net.IPv4(127, 0, 0, 1) // listening everywhere: loopback too
	}
	local := "http://" + net.JoinHostPort(ip.String(), strconv.Itoa(tcp.Port)) + escapePath(pathOf(u))
	port := u.Port()
	if port == "" {
		port = "80"
	}
	if u.Scheme != "http" || port != strconv.Itoa(tcp.Port) || !slices.ContainsFunc(hostIPs(u.Hostname()), func(ip net.IP) bool { return reaches(ip, tcp.IP) }) {
		return local, false
	}
	return base, true
}

// pathOf returns the decoded path of u, "/" when it has none.
func pathOf(u *url.URL) string {
	if u.Path == "" {
		return "/"
	}
	return u.Path
}

// hostIPs returns the addresses of host: itself when it is an IP address,
// the loopback addresses for localhost (RFC 6761), else what the resolver
// says within a few seconds.
func hostIPs(host string) []net.IP {
	if ip := net.ParseIP(host); ip != nil {
		return []net.IP{ip}
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	addrs, _ := net.DefaultResolver.LookupIPAddr(ctx, host)
	ips := make([]net.IP, len(addrs))
	for i, a := range addrs {
		ips[i] = a.IP
	}
	return ips
}

// reaches reports whether a connection to ip reaches a socket listening
// on listen: the same address, or, for a socket listening on every
// address, one of this machine's.
func reaches(ip, listen net.IP) bool {
	switch {
	case !listen.IsUnspecified():
		return ip.Equal(listen)
	case listen.To4() != nil && ip.To4() == nil:
		return false // 0.0.0.0 listens on IPv4 only
	case ip.IsLoopback():
		return true
	}
	addrs, _ := net.InterfaceAddrs()
	return slices.ContainsFunc(addrs, func(a net.Addr) bool {
		n, ok := a.(*net.IPNet)
		return ok && n.IP.Equal(ip)
	})
}

// Reachable reports whether a server listening on addr can be reached
// from other machines: it listens on every address (0.0.0.0, ::) or on
// one that is not a loopback address.
func Reachable(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return !ok || !tcp.IP.IsLoopback()
}
