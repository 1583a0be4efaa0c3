// Package servertest is test support: it runs the real web servers the
// tests serve rsgen's output with (Debian's nginx; Apache through Start),
// on loopback, until the test ends. nginx is configured by nothing but the
// rsgen-nginx.conf a build wrote into the folder it serves, included in a
// plain server block, as the README tells publishers to do.
package servertest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Nginx returns the nginx binary, or "" when there is none, unless
// RSGEN_REQUIRE_NGINX=1 (then the test fails).
func Nginx(t testing.TB) string {
	t.Helper()
	for _, p := range []string{"nginx", "/usr/sbin/nginx"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if os.Getenv("RSGEN_REQUIRE_NGINX") == "1" {
		t.Fatal("nginx not found and RSGEN_REQUIRE_NGINX=1 (apt-get install nginx)")
	}
	return ""
}

// ServeNginx serves the folder root, which holds an rsgen-nginx.conf, with
// the nginx binary bin on 127.0.0.1:port until the test ends. nginx -t
// checks the configuration first, so that a snippet nginx refuses fails
// the test with nginx's words and the snippet.
func ServeNginx(t testing.TB, bin, root string, port int) {
	t.Helper()
	dir := t.TempDir()
	conf := filepath.Join(dir, "nginx.conf")
	mimeTypes := "/etc/nginx/mime.types"
	if _, err := os.Stat(mimeTypes); err != nil {
		t.Fatalf("nginx is installed without %s: %v", mimeTypes, err)
	}
	text := fmt.Sprintf(`worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 64; }
http {
    include %[2]s;
    default_type application/octet-stream;
    access_log off;
    client_body_temp_path %[1]s/body;
    proxy_temp_path %[1]s/proxy;
    fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi;
    scgi_temp_path %[1]s/scgi;
    server {
        listen 127.0.0.1:%[3]d;
        root %[4]s;
        include %[4]s/rsgen-nginx.conf;
    }
}
`, dir, mimeTypes, port, root)
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if msg, err := exec.Command(bin, "-t", "-p", dir, "-c", conf).CombinedOutput(); err != nil {
		snippet, _ := os.ReadFile(filepath.Join(root, "rsgen-nginx.conf"))
		t.Fatalf("nginx -t refuses the snippet: %v\n%s\n--- rsgen-nginx.conf\n%s", err, msg, snippet)
	}
	Start(t, port, bin, "-p", dir, "-c", conf, "-g", "daemon off; master_process off;")
}

// Start starts the server bin with args, which listens on
// 127.0.0.1:port, waits until it accepts connections, and stops it when
// the test ends as its own shutdown would: SIGTERM, on which Apache stops
// its workers before it exits. Killing the parent alone left them running,
// as orphans serving a deleted folder. exec kills a server still running
// five seconds later, and stops waiting for a worker that still holds
// stderr (WaitDelay).
func Start(t testing.TB, port int, bin string, args ...string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), bin, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Wait() }) // after t.Context is done: SIGTERM sent
	for deadline := time.Now().Add(10 * time.Second); ; {
		conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			conn.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not listen on %d: %v\n%s", bin, port, err, stderr.String())
		}
		time.Sleep(20 * time.Millisecond) // a bounded wait for the server to listen
	}
}
