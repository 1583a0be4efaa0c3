package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/rsgen/rsgen/internal/websubhub"
	"github.com/rsgen/rsgen/notify"
)

// The testscripts' WebSub hub and Destination: the test hub of
// internal/websubhub and a notify.Subscriber, served on loopback by the
// test process for the script's lifetime.

func init() {
	scriptCmds["hub"] = cmdHub
	scriptCmds["subscribe"] = cmdSubscribe
}

// scriptServers are the servers a script started, by script and name.
var scriptServers sync.Map // *testscript.TestScript + name -> *http.Server

type serverKey struct {
	ts   *testscript.TestScript
	name string
}

// cmdHub starts or stops a hub on 127.0.0.1:PORT:
//
//	hub start NAME PORT [STATUS]  serve a hub, setting $NAME to its URL; with
//	                              STATUS, answer every publication with it
//	hub stop NAME                 stop it (the port then refuses connections)
func cmdHub(ts *testscript.TestScript, neg bool, args []string) {
	const usage = "usage: hub start NAME PORT [STATUS] | hub stop NAME"
	if neg || len(args) < 2 {
		ts.Fatalf("%s", usage)
	}
	key := serverKey{ts, args[1]}
	switch {
	case args[0] == "stop" && len(args) == 2:
		srv, ok := scriptServers.LoadAndDelete(key)
		if !ok {
			ts.Fatalf("hub stop: no hub %s", args[1])
		}
		srv.(*http.Server).Close()
		return
	case args[0] != "start" || len(args) < 3 || len(args) > 4:
		ts.Fatalf("%s", usage)
	}
	url := "http://127.0.0.1:" + args[2] + "/hub"
	hub := websubhub.New(websubhub.Options{URL: url})
	var h http.Handler = hub
	if len(args) == 4 {
		status, err := strconv.Atoi(args[3])
		ts.Check(err)
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("User-Agent") == notify.UserAgent {
				http.Error(w, "refused by the script", status)
				return
			}
			hub.ServeHTTP(w, r)
		})
	}
	serveOn(ts, key, args[2], h, hub.Close)
	ts.Setenv(args[1], url)
}

// cmdSubscribe subscribes a Destination to a topic:
//
//	subscribe HUB TOPIC PORT DIR
//
// A notify.Subscriber serving its callbacks on 127.0.0.1:PORT subscribes
// to TOPIC at HUB (it returns once the hub verified it), and writes each
// notification delivered to it into DIR, as N.xml from 1 in the order of
// delivery (written whole, then renamed, so that waitfile sees all of it).
func cmdSubscribe(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 4 {
		ts.Fatalf("usage: subscribe HUB TOPIC PORT DIR")
	}
	dir := ts.MkAbs(args[3])
	ts.Check(os.MkdirAll(dir, 0o755))
	var mu sync.Mutex
	n := 0
	sub := notify.NewSubscriber(notify.SubscriberOptions{
		Callback: "http://127.0.0.1:" + args[2] + "/notify",
		Deliver: func(d notify.Delivery) {
			mu.Lock()
			defer mu.Unlock()
			n++
			tmp := filepath.Join(dir, fmt.Sprintf(".%d.xml", n))
			if err := os.WriteFile(tmp, d.Payload, 0o644); err == nil {
				os.Rename(tmp, filepath.Join(dir, fmt.Sprintf("%d.xml", n)))
			}
		},
	})
	serveOn(ts, serverKey{ts, "subscriber " + args[2]}, args[2], sub, func() {})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := sub.Subscribe(ctx, args[0], args[1], time.Time{}); err != nil {
		ts.Fatalf("subscribe: %v", err)
	}
	ts.Defer(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		sub.Close(ctx)
	})
}

// serveOn serves h on 127.0.0.1:port until the script ends (or hub stop),
// then calls done.
func serveOn(ts *testscript.TestScript, key serverKey, port string, h http.Handler, done func()) {
	ln, err := listenAgain("127.0.0.1:" + port)
	ts.Check(err)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	scriptServers.Store(key, srv)
	go srv.Serve(ln)
	ts.Defer(func() {
		srv.Close()
		scriptServers.Delete(key)
		done()
	})
}

// listenAgain listens on addr, trying again for a few seconds while the
// address is in use: a hub started again on its port (hub stop, then hub
// start) can meet another test process's freeport probe, which binds a
// random port for an instant to see whether it is free.
func listenAgain(addr string) (net.Listener, error) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		ln, err := net.Listen("tcp", addr)
		if err == nil || !errors.Is(err, syscall.EADDRINUSE) || time.Now().After(deadline) {
			return ln, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}
