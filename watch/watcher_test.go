package watch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// timeout bounds every wait for a Trigger; tests never sleep to
// synchronise.
const timeout = 10 * time.Second

// start watches a fresh copy of the named files (empty content) below a
// temporary root and returns the root and the Watcher.
func start(t *testing.T, opts Options, files ...string) (string, *Watcher, *warnings) {
	t.Helper()
	root := t.TempDir()
	for _, f := range files {
		write(t, filepath.Join(root, f), "")
	}
	ws := &warnings{}
	opts.Root, opts.Warn = root, ws.add
	if opts.Debounce == 0 {
		opts.Debounce = 20 * time.Millisecond
	}
	w, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := w.Close(); err != nil {
			t.Error(err)
		}
	})
	return root, w, ws
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// next waits for the next Trigger.
func next(t *testing.T, w *Watcher) Trigger {
	t.Helper()
	select {
	case tr := <-w.Triggers():
		return tr
	case <-time.After(timeout):
		t.Fatalf("no trigger within %s", timeout)
	}
	return Trigger{}
}

// warnings collects what a Watcher warns about.
type warnings struct {
	mu   sync.Mutex
	errs []error
}

func (ws *warnings) add(err error) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.errs = append(ws.errs, err)
}

func (ws *warnings) find(target error) error {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for _, err := range ws.errs {
		if errors.Is(err, target) {
			return err
		}
	}
	return nil
}

func TestIgnoredName(t *testing.T) {
	for name, want := range map[string]bool{
		"notes.txt~": true, ".notes.txt.swp": true, ".notes.txt.swx": true, "4913": true,
		".#notes.txt": true, "#notes.txt#": true, "upload.tmp": true, ".goutputstream-X1Y2Z3": true,
		"notes.txt___jb_tmp___": true, "notes.txt___jb_old___": true,
		"notes.txt": false, "swp": false, "notes.swp": false, "#": false, "#tag": false, "49130": false,
		"tmp": false, ".well-known": false, "a~b": false, "___jb_": false,
	} {
		if got := IgnoredName(name); got != want {
			t.Errorf("IgnoredName(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestHandle decides event by event, without a kernel: which events mark
// the tree dirty.
func TestHandle(t *testing.T) {
	root := t.TempDir()
	out := filepath.Join(root, "public")
	config := filepath.Join(filepath.Dir(root), "rsgen.toml")
	w := &Watcher{root: root, dirs: map[string]bool{},
		opts: Options{Skip: []string{out}, ConfigFile: config}}
	for _, c := range []struct {
		name   string
		op     fsnotify.Op
		dirty  bool
		config bool
	}{
		{"a.txt", fsnotify.Create, true, false},
		{"a.txt", fsnotify.Write, true, false},
		{"a.txt", fsnotify.Remove, true, false},
		{"a.txt", fsnotify.Rename, true, false},
		{"a.txt", fsnotify.Chmod, false, false},
		{"a.txt", fsnotify.Write | fsnotify.Chmod, true, false},
		{"sub/.a.txt.swp", fsnotify.Write, false, false},
		{"4913", fsnotify.Create, false, false},
		{"a.txt~", fsnotify.Rename, false, false},
		{"public/a.txt", fsnotify.Create, false, false},
		{"public", fsnotify.Create, false, false},
		{"../elsewhere.txt", fsnotify.Write, false, false},
		{"../rsgen.toml", fsnotify.Write, true, true},
		{"../rsgen.toml", fsnotify.Create, true, true},
		{"../rsgen.toml", fsnotify.Chmod, false, false},
	} {
		var tr Trigger
		name := filepath.Clean(filepath.Join(root, c.name))
		if got := w.handle(fsnotify.Event{Name: name, Op: c.op}, &tr); got != c.dirty || tr.Config != c.config {
			t.Errorf("%s %s: dirty %v, config %v; want %v, %v", c.op, c.name, got, tr.Config, c.dirty, c.config)
		}
	}
}

func TestCreateModifyDelete(t *testing.T) {
	root, w, _ := start(t, Options{}, "a.txt")
	write(t, filepath.Join(root, "b.txt"), "new")
	if tr := next(t, w); tr != (Trigger{}) {
		t.Errorf("trigger %+v, want a plain one", tr)
	}
	write(t, filepath.Join(root, "a.txt"), "changed")
	next(t, w)
	if err := os.Remove(filepath.Join(root, "b.txt")); err != nil {
		t.Fatal(err)
	}
	next(t, w)
}

// TestNewFolder creates nested folders with files faster than the watcher
// can add them, then writes in the deepest: its watch must be there.
func TestNewFolder(t *testing.T) {
	root, w, _ := start(t, Options{})
	write(t, filepath.Join(root, "a/b/c/first.txt"), "1")
	next(t, w)
	write(t, filepath.Join(root, "a/b/c/second.txt"), "2")
	next(t, w)
}

// TestRenameFolder moves a watched folder with a subfolder: the watches
// must follow the new names, so that events below them still arrive.
func TestRenameFolder(t *testing.T) {
	root, w, _ := start(t, Options{}, "old/sub/x.txt")
	if err := os.Rename(filepath.Join(root, "old"), filepath.Join(root, "new")); err != nil {
		t.Fatal(err)
	}
	next(t, w)
	write(t, filepath.Join(root, "new/sub/deeper/y.txt"), "y")
	next(t, w)
	write(t, filepath.Join(root, "new/sub/deeper/z.txt"), "z")
	next(t, w)
}

// TestMaxWait writes without pause, faster than the debounce: the maximum
// wait must still send a Trigger while the writes go on.
func TestMaxWait(t *testing.T) {
	root, w, _ := start(t, Options{Debounce: time.Second, MaxWait: 50 * time.Millisecond})
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("f%d.txt", i%10)), []byte{byte(i)}, 0o644); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	next(t, w)
	close(stop)
	<-done
}

func TestConfigFile(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "rsgen.toml")
	write(t, config, "base_url = \"http://a/\"\n")
	_, w, _ := start(t, Options{ConfigFile: config})
	// An editor's save: a temporary file renamed over the configuration.
	write(t, config+".tmp", "base_url = \"http://b/\"\n")
	if err := os.Rename(config+".tmp", config); err != nil {
		t.Fatal(err)
	}
	if tr := next(t, w); !tr.Config {
		t.Errorf("trigger %+v: want Config", tr)
	}
}

func TestOverflow(t *testing.T) {
	_, w, ws := start(t, Options{})
	w.fsw.Errors <- fsnotify.ErrEventOverflow
	next(t, w)
	if ws.find(fsnotify.ErrEventOverflow) == nil {
		t.Errorf("no warning about the overflow; got %v", ws.errs)
	}
}

func TestWatchLimitFallsBackToPolling(t *testing.T) {
	limit := func(string) error { return syscall.ENOSPC }
	_, w, ws := start(t, Options{addWatch: limit, fallbackPoll: 10 * time.Millisecond})
	if tr := next(t, w); !tr.Polled {
		t.Errorf("trigger %+v: want Polled", tr)
	}
	if err := ws.find(ErrWatchLimit); err == nil {
		t.Errorf("no ErrWatchLimit warning; got %v", ws.errs)
	} else if !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("warning %v does not wrap ENOSPC", err)
	}
}

func TestPollConfig(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "rsgen.toml")
	write(t, config, "a")
	_, w, _ := start(t, Options{ConfigFile: config, Poll: 10 * time.Millisecond})
	if tr := next(t, w); !tr.Polled || tr.Config {
		t.Errorf("trigger %+v: want Polled only", tr)
	}
	write(t, config, "bb")
	for tr := next(t, w); !tr.Config; tr = next(t, w) {
	}
}
