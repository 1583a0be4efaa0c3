package serve

import (
	"net"
	"testing"
)

// TestAnswersFor: a Handler answers for localhost, the loopback
// addresses, the address it was told to listen on and its base URL's
// host, and for nothing else, whatever the case, port or final dot: a
// DNS-rebinding page names its own host.
func TestAnswersFor(t *testing.T) {
	everywhere := &Handler{}
	everywhere.listenAs("0.0.0.0:8080", &net.TCPAddr{IP: net.IPv4zero, Port: 8080})
	named := &Handler{}
	named.listenAs("preview.lan:8080", &net.TCPAddr{IP: net.IPv4(192, 0, 2, 7), Port: 8080})
	unknown := &Handler{} // served by another server: its address is unknown
	const base = "https://Data.Example.org/pub/"
	for _, c := range []struct {
		h    *Handler
		host string
		want bool
	}{
		{unknown, "localhost:8080", true},
		{unknown, "LOCALHOST.:8080", true},
		{unknown, "dev.localhost", true},
		{unknown, "127.0.0.1:8080", true},
		{unknown, "127.1.2.3", true},
		{unknown, "[::1]:8080", true},
		{unknown, "data.example.org", true},
		{unknown, "data.example.org.:443", true},
		{unknown, "", true},
		{unknown, "evil.example", false},
		{unknown, "evil.example:8080", false},
		{unknown, "localhost.evil.example", false},
		{unknown, "example.org", false},
		{unknown, "192.0.2.7:8080", false},
		{named, "preview.lan:8080", true},
		{named, "192.0.2.7:8080", true},
		{named, "192.0.2.8:8080", false},
		{named, "evil.example:8080", false},
		{everywhere, "evil.example:8080", false},
	} {
		if got := c.h.answersFor(c.host, base); got != c.want {
			t.Errorf("listening as %+v, Host %q: answers %v, want %v", c.h.listen, c.host, got, c.want)
		}
	}
	if unknown.answersFor("data.example.org", "") {
		t.Error("with no base URL, a Handler answers for a name")
	}
}
