package checker

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestHTTPRedirectExternal checks that a redirect to another host is
// refused without --follow-external: a Source must not make the check
// request other addresses.
func TestHTTPRedirectExternal(t *testing.T) {
	var external atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		external.Add(1)
		http.NotFound(w, r)
	}))
	defer other.Close()
	srv := serveSite(t, nil, onPath("/changelist.xml", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/changelist.xml", http.StatusFound)
	}))

	f := firstFinding(t, checkURL(t, srv.URL+"/", Options{}), "redirect-external")
	if n := external.Load(); n != 0 {
		t.Errorf("the other host saw %d requests without --follow-external", n)
	}
	if msg := f.Message; !strings.Contains(msg, other.URL+"/changelist.xml") || !strings.Contains(msg, "was not checked, nor anything it lists") {
		t.Errorf("message %q does not name the redirect's target and what was not checked", msg)
	}
	// The Change List was never read: the check fails.
	if f.Severity != Error {
		t.Errorf("a document not read for a redirect is a %s; the check would pass without checking it", f.Severity)
	}

	wantRules(t, checkURL(t, srv.URL+"/", Options{FollowExternal: true}), "document-missing")
	if n := external.Load(); n != 1 {
		t.Errorf("the other host saw %d requests with --follow-external, want 1", n)
	}
}

// TestHTTPRedirectExternalResource: a resource redirected to another
// host (a CDN) is only a warning under --verify-content: every document
// was checked.
func TestHTTPRedirectExternalResource(t *testing.T) {
	other := httptest.NewServer(http.NotFoundHandler())
	defer other.Close()
	srv := serveSite(t, nil, onPath("/res/a.txt", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/a.txt", http.StatusFound)
	}))
	if f := firstFinding(t, checkURL(t, srv.URL+"/", Options{VerifyContent: true}), "redirect-external"); f.Severity != Warning {
		t.Errorf("a resource redirected elsewhere: %s", f)
	}
}

// TestHTTPTimeoutInBody checks that a document whose body stops coming is
// reported as a timeout, not as malformed XML.
func TestHTTPTimeoutInBody(t *testing.T) {
	doc := mustRead(t, "changelist.xml")
	srv := serveSite(t, nil, onPath("/changelist.xml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		w.Write([]byte(doc[:len(doc)/2]))
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the rest never comes
	}))
	rep := checkURL(t, srv.URL+"/", Options{Timeout: 100 * time.Millisecond})
	wantRules(t, rep, "http-timeout")
	want := "the request to " + srv.URL + "/changelist.xml timed out after 100ms"
	if len(rep.Findings) != 1 || rep.Findings[0].Message != want {
		t.Errorf("got %v, want one finding %q", rep.Findings, want)
	}
}

// TestHTTPMaxTime checks that the whole check stops at --max-time, however
// long each request may take: index parts that never answer would
// otherwise hold it for a timeout each, one after another.
func TestHTTPMaxTime(t *testing.T) {
	srv := serveSite(t, nil, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/resourcelist-") {
				<-r.Context().Done() // answer only when the client gives up
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	rep := checkURL(t, srv.URL+"/", Options{Timeout: time.Hour, MaxTime: 100 * time.Millisecond})
	if f := firstFinding(t, rep, "max-time"); f.Severity != Error || !strings.Contains(f.Message, "stopped after 100ms") {
		t.Errorf("got %s", f)
	}
}

// TestHTTPMaxBytes checks that the check stops reading after --max-bytes
// bytes in all.
func TestHTTPMaxBytes(t *testing.T) {
	var served atomic.Int64
	srv := serveSite(t, nil, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			served.Add(1)
			next.ServeHTTP(w, r)
		})
	})
	const limit = 1500
	rep := checkURL(t, srv.URL+"/", Options{MaxBytes: limit})
	wantRules(t, rep, "http-limit")
	if n := served.Load(); n > 3 {
		t.Errorf("the server saw %d requests; the limit is reached during the third", n)
	}
}

// TestHTTPUpUnlisted checks a document whose up link leads to a Capability
// List that does not list it: the walk from the Source Description never
// reaches it, so the check reports the broken chain and checks it anyway.
func TestHTTPUpUnlisted(t *testing.T) {
	srv := serveSite(t, []edit{
		{"capabilitylist.xml", "  <url>\n    <loc>http://example.org/changelist.xml</loc>\n    <rs:md capability=\"changelist\"/>\n  </url>\n", ""},
		{"changelist.xml", `change="created" datetime="2025-12-01T11:00:00Z"`, `change="created" datetime="2025-12-01T09:00:00Z"`},
	}, nil)
	rep := checkURL(t, srv.URL+"/changelist.xml", Options{})
	wantRules(t, rep, "order", "up-unlisted")
	for _, f := range rep.Findings {
		if f.URL != srv.URL+"/changelist.xml" {
			t.Errorf("finding about %s; want both about the Change List", f.URL)
		}
	}
}
