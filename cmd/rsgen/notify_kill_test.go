package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rsgen/rsgen/internal/websubhub"
	"github.com/rsgen/rsgen/notify"
	"github.com/rsgen/rsgen/snapshot"
)

// TestNotifyKilledLosesNothing kills rsgen notify at random moments while
// it sends ten notifications to a slow hub, then runs it again until
// the outbox is empty: the Destination received every notification, and
// each that reached it twice (the hub took it, and the kill came before
// it left the outbox) with the same bytes.
func TestNotifyKilledLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("kills rsgen notify; skipped with -short")
	}
	bin := rsgenBinary(t)
	var mu sync.Mutex
	var got []string // the bodies the Destination received
	dest := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			io.WriteString(w, r.URL.Query().Get("hub.challenge"))
			return
		}
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, string(body))
		mu.Unlock()
	}))
	defer dest.Close()
	var hub *websubhub.Hub
	hubSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("User-Agent") == notify.UserAgent {
			time.Sleep(20 * time.Millisecond) // a slow hub: kills land mid-send
		}
		hub.ServeHTTP(w, r)
	}))
	defer hubSrv.Close()
	hub = websubhub.New(websubhub.Options{URL: hubSrv.URL + "/"})
	defer hub.Close()

	dir := t.TempDir()
	topic := testBase + "resourcesync/default/notification/change.xml"
	writeFile(t, filepath.Join(dir, "rsgen.toml"), fmt.Sprintf("base_url = %q\n[notification]\nhub = %q\n", testBase, hubSrv.URL+"/"))
	build := func(i int) {
		t.Helper()
		writeFile(t, filepath.Join(dir, "site", fmt.Sprintf("f%02d.txt", i)), fmt.Sprint(i))
		cmd := exec.Command(bin, "build", "--quiet", "--now", time.Date(2026, 1, 1, 0, i, 0, 0, time.UTC).Format(time.RFC3339))
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build: %v\n%s", err, out)
		}
	}
	for i := range 11 {
		build(i)
	}
	ps, err := notify.OpenOutbox(filepath.Join(dir, ".rsgen", snapshot.OutboxDir)).Pending()
	if err != nil || len(ps) != 10 {
		t.Fatalf("outbox %d, %v; want 10 notifications", len(ps), err)
	}
	sent := map[string]bool{}
	for _, p := range ps {
		data, err := os.ReadFile(p.Path)
		if err != nil {
			t.Fatal(err)
		}
		sent[string(data)] = true
	}
	resp, err := http.PostForm(hub.URL(), url.Values{"hub.mode": {"subscribe"}, "hub.topic": {topic}, "hub.callback": {dest.URL}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := hub.Await(ctx, websubhub.Is(websubhub.Subscribed, dest.URL)); err != nil {
		t.Fatal(err)
	}

	rng := rand.New(rand.NewPCG(7, 11))
	kills := 0
	for run := 0; ; run++ {
		cmd := exec.Command(bin, "notify", "--quiet")
		cmd.Dir = dir
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if run < 5 {
			time.Sleep(time.Duration(rng.IntN(200)) * time.Millisecond)
			cmd.Process.Signal(syscall.SIGKILL)
		}
		err := cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			kills++
			continue
		}
		if err != nil {
			t.Fatalf("rsgen notify: %v", err)
		}
		if run >= 5 {
			break
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		received := map[string]bool{}
		for _, body := range got {
			if !sent[body] {
				t.Fatalf("the Destination received a notification the outbox never held:\n%s", body)
			}
			received[body] = true
		}
		n, all := len(got), len(received) == len(sent)
		mu.Unlock()
		if all {
			t.Logf("%d kills; %d notifications, %d deliveries (%d resent, each byte for byte)", kills, len(sent), n, n-len(sent))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Destination received %d of the %d notifications", len(received), len(sent))
		}
		time.Sleep(10 * time.Millisecond) // the hub delivers in the background
	}
}
