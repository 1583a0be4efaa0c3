package websubhub_test

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rsgen/rsgen/internal/freeport"
	"github.com/rsgen/rsgen/internal/websubhub"
)

// nodeDir holds the npm package pubsubhubbub (package.json and its lock
// file) and the script that runs it; `npm ci` there installs it.
const nodeDir = "testdata/node"

// nodeLine is one line the script prints.
type nodeLine struct {
	Event       string `json:"event"`
	Topic       string `json:"topic"`
	ContentType string `json:"contentType"`
	Body        string `json:"body"` // base64
	Error       string `json:"error"`
}

// TestNodeSubscriber runs a WebSub subscriber nobody here wrote, the npm
// package pubsubhubbub, against the hub: it subscribes with a callback
// that has a query string of its own and a secret, receives a direct
// payload and a fetched topic with signatures it checks, and unsubscribes.
func TestNodeSubscriber(t *testing.T) {
	node := requireNode(t)
	h := websubhub.Start(t, websubhub.Options{})
	content := `<?xml version="1.0" encoding="UTF-8"?>` + "\n<feed>fetched</feed>\n"
	topic := topicServer(t, h.URL(), "application/xml", &content)

	port := freeport.Get(t)
	ctx := ctxFor(t)
	cmd := exec.CommandContext(ctx, node, "subscriber.js")
	cmd.Dir = nodeDir
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port), "HUB="+h.URL(), "TOPIC="+topic, "SECRET=node-secret")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	lines := readLines(stdout)
	await := func(event string) nodeLine {
		t.Helper()
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("the subscriber ended before %q", event)
				}
				if l.Event == "error" || l.Event == "denied" || l.Error != "" {
					t.Fatalf("the subscriber reports %+v", l)
				}
				if l.Event == event {
					return l
				}
			case <-ctx.Done():
				t.Fatalf("no %q from the subscriber; the hub's events:\n%s", event, h.Events())
			}
		}
	}

	if l := await("subscribe"); l.Topic != topic {
		t.Errorf("subscribed to %q, want %q", l.Topic, topic)
	}
	sub, err := h.Await(ctx, websubhub.Is(websubhub.Subscribed, ""))
	if err != nil {
		t.Fatal(err)
	}
	if u, _ := url.Parse(sub.Callback); u.Query().Get("topic") != topic {
		t.Errorf("callback %s: its own query string (topic=...) was lost", sub.Callback)
	}
	if subs := h.Subscriptions(); len(subs) != 1 || !subs[0].Secret {
		t.Fatalf("subscriptions %+v: want one with a secret", subs)
	}

	payload := `<?xml version="1.0" encoding="UTF-8"?>` + "\n<urlset>direct</urlset>\n"
	postDirect(t, h, topic, payload)
	checkNodeFeed(t, await("feed"), topic, "application/xml", payload)

	publish(t, h, url.Values{"hub.topic": {topic}, "hub.url": {topic}})
	checkNodeFeed(t, await("feed"), topic, "application/xml", content)

	io.WriteString(stdin, "unsubscribe\n")
	await("unsubscribe")
	if _, err := h.Await(ctx, websubhub.Is(websubhub.Unsubscribed, sub.Callback)); err != nil {
		t.Fatal(err)
	}
	if subs := h.Subscriptions(); len(subs) != 0 {
		t.Errorf("subscriptions %+v after the unsubscription", subs)
	}
}

// checkNodeFeed checks a delivery the subscriber accepted: it emits one
// only when the signature matched.
func checkNodeFeed(t *testing.T, l nodeLine, topic, contentType, body string) {
	t.Helper()
	got, _ := base64.StdEncoding.DecodeString(l.Body)
	if string(got) != body || l.Topic != topic || l.ContentType != contentType {
		t.Errorf("delivery topic %q, %s, %q; want %q, %s, %q", l.Topic, l.ContentType, got, topic, contentType, body)
	}
}

// requireNode returns the node binary, or skips the test when node or the
// installed package is missing, unless RSGEN_REQUIRE_NODE=1.
func requireNode(t *testing.T) string {
	t.Helper()
	skip := func(msg string) {
		if os.Getenv("RSGEN_REQUIRE_NODE") == "1" {
			t.Fatalf("%s, and RSGEN_REQUIRE_NODE=1", msg)
		}
		t.Skipf("%s; set RSGEN_REQUIRE_NODE=1 to make this an error", msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		skip("node is not installed")
	}
	if _, err := os.Stat(filepath.Join(nodeDir, "node_modules", "pubsubhubbub")); err != nil {
		skip("the npm package pubsubhubbub is not installed (run npm ci in internal/websubhub/" + nodeDir + ")")
	}
	return node
}

// readLines decodes the script's JSON lines onto a channel, closed at
// its end.
func readLines(r io.Reader) <-chan nodeLine {
	ch := make(chan nodeLine, 16)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var l nodeLine
			if json.Unmarshal(sc.Bytes(), &l) == nil {
				ch <- l
			}
		}
	}()
	return ch
}
