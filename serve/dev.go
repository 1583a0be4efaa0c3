package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"

	"github.com/rsgen/rsgen/layout"
)

// # Live reload (Options.Dev)
//
// A development server tells the pages it served when a build finished:
// each HTML response gets, before its </body>, a <script> that listens to
// a stream of server-sent events and reloads the page on "reload", or
// shows the error of a failed build over the page on "build-error" (the
// output, and so the page, is then the last good build's). The files in
// the output are never changed: the script is added to the response only,
// which therefore has no ETag, no Last-Modified and no ranges.
//
// The stream and the script live under resourcesync/_dev/, in rsgen's own
// folder where no resource can be (layout.IsReserved) and no set either
// (set names start with a letter or a digit).
//
// A page carries the number of the build it shows; the stream sends the
// current state at once to a page that connects after a newer build, so
// that no build is missed between the response and the connection.

// The paths of live reload below the base path.
const (
	devEvents = layout.DocumentsDir + "/_dev/events"
	devScript = layout.DocumentsDir + "/_dev/reload.js"
)

// maxInjected bounds the HTML files that get the script: a larger one is
// read into memory to add it, so it is served as it is.
const maxInjected = 8 << 20

// dev is the live-reload state of a Handler.
type dev struct {
	mu     sync.Mutex
	build  int    // the number of builds reported so far
	err    string // the error of the last build, "" when it succeeded
	subs   map[chan struct{}]bool
	done   chan struct{} // closed by close
	closed bool
}

func newDev() *dev {
	return &dev{subs: map[chan struct{}]bool{}, done: make(chan struct{})}
}

// Built reports that a build finished, with its error, to the pages that
// are open: they reload, or show the error (and so do the HTML pages
// served until the next build that succeeds). `rsgen watch --serve` calls
// it after each build. It does nothing unless the Handler is a development
// server (Options.Dev).
func (h *Handler) Built(err error) {
	if h.dev != nil {
		h.dev.built(err)
	}
}

// CloseStreams ends the live-reload streams, which would otherwise keep
// their connections open: a server calls it when it shuts down.
func (h *Handler) CloseStreams() {
	if h.dev != nil {
		h.dev.close()
	}
}

func (d *dev) built(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.build++
	d.err = ""
	if err != nil {
		d.err = err.Error()
	}
	for sub := range d.subs {
		d.notify(sub)
	}
}

// notify wakes up the stream of sub, unless a wake-up is pending already:
// the stream reads the newest state when it wakes up.
func (d *dev) notify(sub chan struct{}) {
	select {
	case sub <- struct{}{}:
	default:
	}
}

func (d *dev) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.closed {
		d.closed = true
		close(d.done)
	}
}

// state returns the current build number and error.
func (d *dev) state() (int, string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.build, d.err
}

// route returns the target of the live-reload paths, or the zero target.
func (d *dev) route(name string) target {
	switch {
	case d == nil:
		return target{}
	case name == devEvents:
		return target{dev: d.events}
	case name == devScript:
		return target{dev: d.script}
	}
	return target{}
}

// events streams the state after each build as server-sent events. The
// query's build is the build the page shows.
func (d *dev) events(w http.ResponseWriter, r *http.Request, _ *index) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	if r.Method == http.MethodHead {
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	sub := make(chan struct{}, 1)
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		http.Error(w, "server shutting down", http.StatusServiceUnavailable)
		return
	}
	d.subs[sub] = true
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		delete(d.subs, sub)
		d.mu.Unlock()
	}()

	// The comment tells the client (and tests) that it is subscribed.
	if _, err := io.WriteString(w, "retry: 1000\n: subscribed\n\n"); err != nil {
		return
	}
	flusher.Flush()
	if shown, err := strconv.Atoi(r.URL.Query().Get("build")); err == nil {
		if build, _ := d.state(); build != shown {
			d.notify(sub)
		}
	}
	for {
		select {
		case <-sub:
			if _, err := io.WriteString(w, d.event()); err != nil {
				return
			}
			flusher.Flush()
		case <-r.Context().Done():
			return
		case <-d.done:
			return
		}
	}
}

// event renders the current state as one server-sent event.
func (d *dev) event() string {
	build, msg := d.state()
	if msg == "" {
		return fmt.Sprintf("event: reload\ndata: {\"build\":%d}\n\n", build)
	}
	data, _ := json.Marshal(struct {
		Build int    `json:"build"`
		Error string `json:"error"`
	}{build, msg}) // one line: JSON escapes line breaks
	return "event: build-error\ndata: " + string(data) + "\n\n"
}

// script serves the live-reload script.
func (d *dev) script(w http.ResponseWriter, r *http.Request, _ *index) {
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if r.Method != http.MethodHead {
		io.WriteString(w, reloadScript)
	}
}

// reloadScript listens to the events whose URL its tag gives, and shows
// the error its tag carries, if any.
const reloadScript = `// rsgen development server: reloads the page after each build and shows
// the error of a failed build. Nothing of it is published.
(function () {
  "use strict";
  var tag = document.currentScript;
  function show(msg) {
    var box = document.getElementById("rsgen-dev-error");
    if (!box) {
      box = document.createElement("pre");
      box.id = "rsgen-dev-error";
      // Styled through the CSSOM, which a Content-Security-Policy without
      // 'unsafe-inline' (the document browser's) allows, where it refuses
      // a style attribute.
      Object.assign(box.style, {position: "fixed", inset: "0", zIndex: "2147483647", margin: "0", padding: "2em",
        overflow: "auto", background: "rgba(24,24,24,.94)", color: "#ffb3b3", font: "14px/1.5 monospace", whiteSpace: "pre-wrap"});
      (document.body || document.documentElement).appendChild(box);
    }
    box.textContent = "rsgen: the last build failed; this page is the build before it.\n\n" + msg;
  }
  if (tag.dataset.error) show(tag.dataset.error);
  var events = new EventSource(tag.dataset.events);
  events.addEventListener("reload", function () { location.reload(); });
  events.addEventListener("build-error", function (e) { show(JSON.parse(e.data).error); });
})();
`

// serveHTML answers with the HTML file f and the live-reload script tag
// before its </body>, or at its end when it has none.
func (d *dev) serveHTML(w http.ResponseWriter, r *http.Request, f *os.File, x *index) {
	page, err := io.ReadAll(io.LimitReader(f, maxInjected+1))
	if err != nil {
		http.Error(w, fmt.Sprintf("serve: %v", err), http.StatusInternalServerError)
		return
	}
	page = inject(page, d.tag(x.basePath))
	hdr := w.Header()
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("Content-Length", strconv.Itoa(len(page)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(page)
	}
}

// tag returns the script tag of the current state.
func (d *dev) tag(basePath string) []byte {
	build, msg := d.state()
	events := escapePath(basePath+devEvents) + "?build=" + strconv.Itoa(build)
	tag := `<script src="` + html.EscapeString(escapePath(basePath+devScript)) + `" data-events="` + html.EscapeString(events) + `"`
	if msg != "" {
		tag += ` data-error="` + html.EscapeString(msg) + `"`
	}
	return []byte(tag + "></script>")
}

// inject returns page with tag before its last </body>, or at its end.
func inject(page, tag []byte) []byte {
	at := bytes.LastIndex(bytes.ToLower(page), []byte("</body"))
	if at < 0 {
		at = len(page)
	}
	out := make([]byte, 0, len(page)+len(tag))
	out = append(out, page[:at]...)
	out = append(out, tag...)
	return append(out, page[at:]...)
}
