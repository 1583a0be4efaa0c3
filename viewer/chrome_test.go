package viewer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// This file drives Debian's Chromium through the DevTools protocol over
// --remote-debugging-pipe: Chromium reads commands from its file
// descriptor 3 and writes replies and events to its descriptor 4, each a
// JSON message ended by a NUL byte. That needs no websocket and no Go
// dependency.

// chromiumPath returns the Chromium binary, or skips the test when there
// is none, unless RSGEN_REQUIRE_CHROMIUM=1 (then it fails).
func chromiumPath(t *testing.T) string {
	t.Helper()
	required := os.Getenv("RSGEN_REQUIRE_CHROMIUM") == "1"
	if testing.Short() && !required {
		t.Skip("-short: the document browser is not tested in a browser")
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if required {
		t.Fatal("chromium not found and RSGEN_REQUIRE_CHROMIUM=1 (apt-get install chromium)")
	}
	t.Skip("chromium not found: the document browser is not tested in a browser (apt-get install chromium)")
	return ""
}

// chromeFlags are what headless Chromium needs on a machine without a
// network or a GPU. XSLT is disabled, as in the releases to come: the
// document browser must not depend on it.
var chromeFlags = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync",
	"--disable-features=XSLT", "--hide-scrollbars", "--remote-debugging-pipe",
}

// callTimeout bounds one protocol call, so that a hung browser fails the
// test with a message instead of hanging it.
const callTimeout = 30 * time.Second

type cdpMessage struct {
	ID        int64           `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Error     *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// chrome is one running browser.
type chrome struct {
	cmd    *exec.Cmd
	in     *os.File
	stderr *bytes.Buffer

	mu        sync.Mutex
	nextID    int64
	replies   map[int64]chan cdpMessage
	listeners map[int64]func(cdpMessage)
	nextLst   int64
	done      chan struct{}
}

// startChrome starts Chromium with extra flags and stops it when the test
// ends.
func startChrome(t *testing.T, bin string, extra ...string) *chrome {
	t.Helper()
	cmdR, cmdW, err := os.Pipe() // Chromium reads commands from cmdR
	if err != nil {
		t.Fatal(err)
	}
	evR, evW, err := os.Pipe() // and writes replies and events to evW
	if err != nil {
		t.Fatal(err)
	}
	args := append(append(append([]string{}, chromeFlags...), extra...), "--user-data-dir="+t.TempDir(), "about:blank")
	c := &chrome{
		cmd: exec.Command(bin, args...), in: cmdW, stderr: new(bytes.Buffer),
		replies: map[int64]chan cdpMessage{}, listeners: map[int64]func(cdpMessage){}, done: make(chan struct{}),
	}
	c.cmd.ExtraFiles = []*os.File{cmdR, evW} // descriptors 3 and 4
	c.cmd.Stderr = c.stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	cmdR.Close()
	evW.Close()
	go c.read(evR)
	t.Cleanup(func() {
		c.call(context.Background(), "", "Browser.close", nil, nil)
		c.in.Close()
		waited := make(chan error, 1)
		go func() { waited <- c.cmd.Wait() }()
		select {
		case <-waited:
		case <-time.After(10 * time.Second):
			c.cmd.Process.Kill()
			<-waited
		}
	})
	return c
}

// read delivers replies to their callers and events to the listeners,
// until the browser closes its end.
func (c *chrome) read(r *os.File) {
	defer close(c.done)
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		raw, err := br.ReadBytes(0)
		if err != nil {
			return
		}
		var m cdpMessage
		if err := json.Unmarshal(raw[:len(raw)-1], &m); err != nil {
			continue
		}
		c.mu.Lock()
		if m.ID != 0 {
			if ch := c.replies[m.ID]; ch != nil {
				ch <- m
				delete(c.replies, m.ID)
			}
		} else {
			for _, l := range c.listeners {
				l(m)
			}
		}
		c.mu.Unlock()
	}
}

// listen calls f (under the reader's lock: f must not call the browser)
// for every event until the returned function is called.
func (c *chrome) listen(f func(cdpMessage)) (stop func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nextLst++
	id := c.nextLst
	c.listeners[id] = f
	return func() {
		c.mu.Lock()
		delete(c.listeners, id)
		c.mu.Unlock()
	}
}

// call sends a command (to a page's session, or to the browser when
// session is "") and decodes its result into result.
func (c *chrome) call(ctx context.Context, session, method string, params, result any) error {
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	ch := make(chan cdpMessage, 1)
	c.replies[id] = ch
	c.mu.Unlock()
	msg, err := json.Marshal(map[string]any{"id": id, "method": method, "params": orEmpty(params), "sessionId": session})
	if err != nil {
		return err
	}
	if _, err := c.in.Write(append(msg, 0)); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	select {
	case m := <-ch:
		if m.Error != nil {
			return fmt.Errorf("%s: %s", method, m.Error.Message)
		}
		if result != nil {
			return json.Unmarshal(m.Result, result)
		}
		return nil
	case <-c.done:
		return fmt.Errorf("%s: the browser is gone; its output:\n%s", method, c.stderr.String())
	case <-ctx.Done():
		return fmt.Errorf("%s: no answer: %w", method, ctx.Err())
	}
}

func orEmpty(params any) any {
	if params == nil {
		return struct{}{}
	}
	return params
}

// tab is one page of the browser, with what it reported that a person
// would call a problem: console errors and warnings, exceptions, failed
// loads, and DevTools issues (deprecations, low contrast, unlabelled
// fields, blocked content).
type tab struct {
	t *testing.T
	c *chrome
	*tabState
}

type tabState struct {
	session  string
	mu       sync.Mutex
	problems []string
	loads    chan struct{}
}

// in returns the tab for use by test t (a subtest).
func (p *tab) in(t *testing.T) *tab {
	return &tab{t: t, c: p.c, tabState: p.tabState}
}

func (c *chrome) newTab(t *testing.T) *tab {
	t.Helper()
	var target struct{ TargetID string }
	if err := c.call(context.Background(), "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		t.Fatal(err)
	}
	var attached struct{ SessionID string }
	if err := c.call(context.Background(), "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached); err != nil {
		t.Fatal(err)
	}
	p := &tab{t: t, c: c, tabState: &tabState{session: attached.SessionID, loads: make(chan struct{}, 16)}}
	c.listen(func(m cdpMessage) {
		if m.SessionID == p.session {
			p.event(m)
		}
	})
	for _, domain := range []string{"Page.enable", "Runtime.enable", "Log.enable", "Audits.enable"} {
		p.call(domain, nil, nil)
	}
	return p
}

// event records problems and page loads. It runs on the reader's
// goroutine, so it never blocks.
func (p *tabState) event(m cdpMessage) {
	var problem string
	switch m.Method {
	case "Page.loadEventFired":
		select {
		case p.loads <- struct{}{}:
		default:
		}
	case "Runtime.exceptionThrown":
		var e struct {
			ExceptionDetails struct {
				Text      string
				Exception struct{ Description string }
			}
		}
		json.Unmarshal(m.Params, &e)
		problem = "exception: " + e.ExceptionDetails.Text + " " + e.ExceptionDetails.Exception.Description
	case "Runtime.consoleAPICalled":
		var e struct {
			Type string
			Args []struct {
				Value       any
				Description string
			}
		}
		json.Unmarshal(m.Params, &e)
		if e.Type == "error" || e.Type == "warning" || e.Type == "assert" {
			problem = "console." + e.Type + ": " + string(m.Params)
		}
	case "Log.entryAdded":
		var e struct {
			Entry struct{ Level, Source, Text, URL string }
		}
		json.Unmarshal(m.Params, &e)
		if e.Entry.Level == "error" || e.Entry.Level == "warning" {
			problem = "log " + e.Entry.Level + " (" + e.Entry.Source + "): " + e.Entry.Text + " " + e.Entry.URL
		}
	case "Audits.issueAdded":
		problem = "issue: " + string(m.Params)
	}
	if problem != "" {
		p.mu.Lock()
		p.problems = append(p.problems, problem)
		p.mu.Unlock()
	}
}

// takeProblems returns the problems reported since the last call.
func (p *tab) takeProblems() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.problems
	p.problems = nil
	return out
}

// noProblems fails the test for every problem reported since the last
// check, saying where the person was.
func (p *tab) noProblems(where string) {
	p.t.Helper()
	for _, pr := range p.takeProblems() {
		p.t.Errorf("%s: %s", where, pr)
	}
}

func (p *tab) call(method string, params, result any) {
	p.t.Helper()
	if err := p.c.call(context.Background(), p.session, method, params, result); err != nil {
		p.t.Fatal(err)
	}
}

// eval evaluates a JavaScript expression in the page, awaiting it when it
// is a promise, and decodes its value into result.
func (p *tab) eval(expr string, result any) {
	p.t.Helper()
	var r struct {
		Result           struct{ Value json.RawMessage }
		ExceptionDetails *struct {
			Text      string
			Exception struct{ Description string }
		}
	}
	// userGesture: what the test does stands for what a person does.
	p.call("Runtime.evaluate", map[string]any{"expression": expr, "awaitPromise": true, "returnByValue": true, "userGesture": true}, &r)
	if r.ExceptionDetails != nil {
		p.t.Fatalf("evaluate %s: %s %s", expr, r.ExceptionDetails.Text, r.ExceptionDetails.Exception.Description)
	}
	if result != nil && len(r.Result.Value) > 0 {
		if err := json.Unmarshal(r.Result.Value, result); err != nil {
			p.t.Fatalf("evaluate %s: %v (%s)", expr, err, r.Result.Value)
		}
	}
}

// js quotes a Go string as a JavaScript string literal.
func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// open loads url as a new document and waits until the browser has drawn
// its first view.
func (p *tab) open(url string) {
	p.t.Helper()
	for len(p.loads) > 0 {
		<-p.loads
	}
	p.call("Page.navigate", map[string]any{"url": url}, nil)
	select {
	case <-p.loads:
	case <-time.After(callTimeout):
		p.t.Fatalf("%s did not load", url)
	}
	p.eval(`new Promise(resolve => {
		if (document.body.dataset.state === 'ready') resolve(true);
		else document.addEventListener('rsviewer:rendered', () => resolve(true), {once: true});
	})`, nil)
}

// act runs action (a function of the tab) and waits for the view it
// leads to: the handshake is armed before the action.
func (p *tab) act(action func()) {
	p.t.Helper()
	p.eval(`window.__rendered = new Promise(resolve => document.addEventListener('rsviewer:rendered', () => resolve(true), {once: true})), true`, nil)
	action()
	p.eval(`window.__rendered`, nil)
}

// goTo shows the route of a fragment, as following a link would, and
// waits for its view (at once when it is already shown).
func (p *tab) goTo(hash string) {
	p.t.Helper()
	p.eval(`new Promise(resolve => {
		const hash = `+js(hash)+`;
		if (location.hash === hash) return resolve(false);
		document.addEventListener('rsviewer:rendered', () => resolve(true), {once: true});
		location.hash = hash;
	})`, nil)
}

// charts waits until the view's pictures are drawn (or it has none).
func (p *tab) charts() string {
	p.t.Helper()
	var state string
	p.eval(`new Promise(resolve => {
		const s = document.body.dataset.charts;
		if (s !== 'loading') resolve(s || 'none');
		else document.addEventListener('rsviewer:charts', () => resolve('ready'), {once: true});
	})`, &state)
	return state
}

// click clicks the middle of the element the selector finds, with the
// mouse, as a person would.
func (p *tab) click(selector string) {
	p.t.Helper()
	var at struct{ X, Y float64 }
	p.eval(`(() => {
		const el = document.querySelector(`+js(selector)+`);
		if (!el) throw new Error('nothing matches ' + `+js(selector)+`);
		el.scrollIntoView({block: 'center'});
		const r = el.getBoundingClientRect();
		const x = r.x + r.width / 2, y = r.y + r.height / 2;
		const hit = document.elementFromPoint(x, y);
		if (!hit || !el.contains(hit)) throw new Error('the middle of ' + `+js(selector)+` + ' is covered by ' + (hit ? hit.outerHTML.slice(0, 80) : 'nothing'));
		return {x, y};
	})()`, &at)
	for _, typ := range []string{"mouseMoved", "mousePressed", "mouseReleased"} {
		p.call("Input.dispatchMouseEvent", map[string]any{"type": typ, "x": at.X, "y": at.Y, "button": "left", "clickCount": 1}, nil)
	}
}

// key presses a key such as "Tab" or "Enter".
func (p *tab) key(name string) {
	p.t.Helper()
	codes := map[string]int{"Tab": 9, "Enter": 13}
	down := map[string]any{"type": "keyDown", "key": name, "code": name, "windowsVirtualKeyCode": codes[name]}
	if name == "Enter" {
		down["text"] = "\r"
	}
	p.call("Input.dispatchKeyEvent", down, nil)
	p.call("Input.dispatchKeyEvent", map[string]any{"type": "keyUp", "key": name, "code": name, "windowsVirtualKeyCode": codes[name]}, nil)
}

// typeText types text into the focused field.
func (p *tab) typeText(text string) {
	p.t.Helper()
	p.call("Input.insertText", map[string]any{"text": text}, nil)
}

// viewport sets the window's size; mobile makes it behave as a phone's.
func (p *tab) viewport(width, height int, mobile bool) {
	p.t.Helper()
	p.call("Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile}, nil)
}

// checkContrast fails the test for every visible text of the page whose
// contrast with its background is below WCAG AA (4.5:1, or 3:1 for large
// text) and every bar of a chart below 3:1. (Chromium's own
// Audits.checkContrast is not in Debian's headless build.)
func (p *tab) checkContrast(where string) {
	p.t.Helper()
	var low []string
	p.eval(contrastCheck, &low)
	for _, l := range low {
		p.t.Errorf("%s: low contrast: %s", where, l)
	}
}

const contrastCheck = `(() => {
	const parse = (c) => {
		const m = /rgba?\(([^)]+)\)/.exec(c || '');
		if (!m) return null;
		const v = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number);
		return {r: v[0], g: v[1], b: v[2], a: v.length > 3 ? v[3] : 1};
	};
	const over = (top, under) => ({
		r: top.r * top.a + under.r * (1 - top.a), g: top.g * top.a + under.g * (1 - top.a),
		b: top.b * top.a + under.b * (1 - top.a), a: 1});
	const background = (el) => {
		const layers = [];
		for (let e = el; e; e = e.parentElement) {
			const c = parse(getComputedStyle(e).backgroundColor);
			if (c && c.a > 0) {
				layers.push(c);
				if (c.a >= 1) break;
			}
		}
		let bg = {r: 255, g: 255, b: 255, a: 1};
		for (let i = layers.length - 1; i >= 0; i--) bg = over(layers[i], bg);
		return bg;
	};
	const lum = (c) => {
		const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
		return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b);
	};
	const ratio = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
	const low = [];
	const visible = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
	for (const el of document.body.querySelectorAll('*')) {
		if (!visible(el) || el.closest('title')) continue;
		const isSVG = el instanceof SVGElement;
		const hasText = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim() !== '');
		const isBar = isSVG && el.matches('rect.bar');
		if (!hasText && !isBar) continue;
		const cs = getComputedStyle(el);
		const fg = parse(isSVG ? cs.fill : cs.color);
		if (!fg) continue;
		const bg = background(el);
		const size = parseFloat(cs.fontSize);
		const large = size >= 24 || (size >= 18.66 && Number(cs.fontWeight) >= 700);
		const need = isBar || large ? 3 : 4.5;
		const r = ratio(over(fg, bg), bg);
		if (r < need) low.push(r.toFixed(2) + ':1 < ' + need + ':1 for <' + el.tagName.toLowerCase() + ' class="' + (el.getAttribute('class') || '') + '"> ' + JSON.stringify((el.textContent || '').trim().slice(0, 40)));
	}
	return low;
})()`

// screenshot returns a PNG of the viewport, or of the element selector
// finds when it is not "".
func (p *tab) screenshot(selector string) []byte {
	p.t.Helper()
	params := map[string]any{"format": "png"}
	if selector != "" {
		var clip map[string]float64
		p.eval(`(() => {
			const el = document.querySelector(`+js(selector)+`);
			el.scrollIntoView({block: 'start'});
			const r = el.getBoundingClientRect();
			return {x: r.x + scrollX, y: r.y + scrollY, width: r.width, height: r.height, scale: 1};
		})()`, &clip)
		params["clip"] = clip
		params["captureBeyondViewport"] = true
	} else {
		p.eval(`scrollTo(0, 0)`, nil)
	}
	var shot struct{ Data string }
	p.call("Page.captureScreenshot", params, &shot)
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		p.t.Fatal(err)
	}
	return png
}

// screenshotAt returns a PNG of the viewport scrolled to the element the
// selector finds.
func (p *tab) screenshotAt(selector string) []byte {
	p.t.Helper()
	p.eval(`document.querySelector(`+js(selector)+`).scrollIntoView({block: 'start'})`, nil)
	var shot struct{ Data string }
	p.call("Page.captureScreenshot", map[string]any{"format": "png"}, &shot)
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		p.t.Fatal(err)
	}
	return png
}
