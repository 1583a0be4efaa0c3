package generator_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/hosting"
	"github.com/rsgen/rsgen/internal/freeport"
	"github.com/rsgen/rsgen/internal/servertest"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/serve"
)

// apachePath returns Debian's apache2 binary, or skips the test when there
// is none, unless RSGEN_REQUIRE_APACHE=1 (then it fails).
func apachePath(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("apache2"); err == nil {
		return p
	}
	if p := "/usr/sbin/apache2"; fileExists(p) {
		return p
	}
	if os.Getenv("RSGEN_REQUIRE_APACHE") == "1" {
		t.Fatal("apache2 not found and RSGEN_REQUIRE_APACHE=1 (apt-get install apache2)")
	}
	t.Skip("apache2 not found: the generated .htaccess is not tested in Apache (apt-get install apache2)")
	return ""
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// startApache serves the output folder out with Apache on 127.0.0.1:port,
// configured by a minimal server that only allows .htaccess files, with an
// empty mime.types: every type comes from the generated .htaccess. Apache
// drops root for www-data, so the folders down to out become readable.
func startApache(t *testing.T, bin, out string, port int) {
	t.Helper()
	for dir := out; dir != "/" && dir != os.TempDir(); dir = filepath.Dir(dir) {
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "httpd.conf")
	mods := "/usr/lib/apache2/modules/"
	text := fmt.Sprintf(`ServerRoot %[1]s
LoadModule mpm_event_module %[2]smod_mpm_event.so
LoadModule authz_core_module %[2]smod_authz_core.so
LoadModule mime_module %[2]smod_mime.so
LoadModule alias_module %[2]smod_alias.so
LoadModule headers_module %[2]smod_headers.so
Listen 127.0.0.1:%[3]d
ServerName localhost
PidFile %[1]s/httpd.pid
ErrorLog %[1]s/error.log
DefaultRuntimeDir %[1]s
User www-data
Group www-data
TypesConfig /dev/null
DocumentRoot %[4]s
<Directory %[4]s>
    AllowOverride FileInfo
    Require all granted
</Directory>
`, dir, mods, port, out)
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if msg, err := exec.Command(bin, "-t", "-f", conf).CombinedOutput(); err != nil {
		t.Fatalf("apache2 -t: %v\n%s", err, msg)
	}
	servertest.Start(t, port, bin, "-f", conf, "-DFOREGROUND")
}

// TestApacheStopsWithTheTest: the Apache a test starts stops whole when
// the test ends, its workers too. Killing the parent alone left three
// orphans per run, serving a deleted folder until the machine stopped.
func TestApacheStopsWithTheTest(t *testing.T) {
	bin := apachePath(t)
	if bin == "" {
		t.Skip("no apache2")
	}
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("no /proc to look for the workers in")
	}
	t.Run("serve", func(t *testing.T) {
		port := freeport.Get(t)
		startApache(t, bin, t.TempDir(), port)
		// Apache listens before it forks its workers; only a worker answers,
		// so after an answer they are all there to be counted.
		contentTypeOf(t, http.DefaultClient, fmt.Sprintf("http://127.0.0.1:%d/", port))
		if running := processesNaming(t, t.Name()); len(running) < 2 {
			t.Fatalf("Apache runs as %d processes, want a parent and its workers: the test looks in the wrong place", len(running))
		}
	})
	if left := processesNaming(t, "TestApacheStopsWithTheTestserve"); len(left) > 0 {
		for _, pid := range left {
			if p, err := os.FindProcess(pid); err == nil {
				p.Kill()
			}
		}
		t.Errorf("%d Apache processes outlived the test that started them (killed now)", len(left))
	}
}

// processesNaming returns the processes whose command line holds s, by
// /proc; s is a test's name, with its slashes gone as they are in the
// test's temporary folders.
func processesNaming(t *testing.T, s string) []int {
	t.Helper()
	s = strings.ReplaceAll(s, "/", "")
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && strings.Contains(string(cmdline), s) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// contentTypeOf returns the media type, without parameters, that a GET
// of url is answered with.
func contentTypeOf(t *testing.T, client *http.Client, url string) (string, int) {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	resp.Body.Close()
	ct, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";")
	return strings.TrimSpace(ct), resp.StatusCode
}

// linksOf returns the Link headers that a GET of url is answered with.
func linksOf(t *testing.T, client *http.Client, url string) []string {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	resp.Body.Close()
	return resp.Header.Values("Link")
}

// TestOneMediaTypeTable checks every entry of rsgen's one media-type table
// across every output that names a type: the type attribute of the Resource
// List, the Content-Type of rsgen serve, and the Content-Type that nginx
// and Apache send when configured by nothing but the generated hosting
// files. rsgen's own outputs (documents, the Source Description, TimeMaps,
// patches, packages) are checked the same way, against layout.ContentType.
func TestOneMediaTypeTable(t *testing.T) {
	s := newSite(t, "http://127.0.0.1:1/", func(c *config.Config) {
		c.Publish.Targets = []config.Target{"nginx", "apache"}
		c.Dumps.ResourceDump = true
		c.Sets = []config.Set{{Name: "files", SetLinks: config.SetLinks{KeepVersions: true, Patches: true}}}
	})
	want := map[string]string{} // output path -> media type
	for _, e := range layout.Extensions() {
		p := "types/file" + e.Ext
		s.write(p, "content of "+p)
		want[p] = e.Type
	}
	s.write("types/UPPER.CSV", "a,b")
	want["types/UPPER.CSV"] = "text/csv"
	// Names that say nothing: the build sniffs their types, which hosts
	// learn from a rule of each file (/usr/share/doc's 1,686 copyright
	// and README files were served as application/octet-stream by nginx).
	s.write("types/README", "plain words\n")
	want["types/README"] = "text/plain"
	s.write("types/blob", "\x00\x01\x02\x03")
	want["types/blob"] = "application/octet-stream"
	s.write("types/sub/copyright", "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n")
	want["types/sub/copyright"] = "text/plain"
	// An extension the table lacks: typed by extension where all its
	// files share a type (.go), file by file where they do not (.dat).
	s.write("types/main.go", "package main\n")
	want["types/main.go"] = "text/plain"
	s.write("types/sub/UPPER.GO", "package sub\n")
	want["types/sub/UPPER.GO"] = "text/plain"
	s.write("types/text.dat", "words\n")
	want["types/text.dat"] = "text/plain"
	s.write("types/bytes.dat", "\x00\x01")
	want["types/bytes.dat"] = "application/octet-stream"
	s.write("data.json", `{"v": 1}`)
	s.build(t0)
	s.write("data.json", `{"v": 2}`)         // a memento, a TimeMap and a patch
	s.write("types/README", "other words\n") // a memento typed like its resource
	s.build(t0.Add(time.Minute))

	listed := map[string]string{}
	for _, e := range s.doc("resourcesync/files/resourcelist.xml").Entries {
		listed[locPath(t, s.Cfg.BaseURL, e.Loc)] = e.MD().Type
	}
	for p, typ := range want {
		if listed[p] != typ {
			t.Errorf("Resource List: %s has type %q, want %q", p, listed[p], typ)
		}
	}
	want[layout.Memento(t0, "types/README")] = "text/plain"
	err := filepath.WalkDir(s.Out, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(s.Out, p)
		rel = filepath.ToSlash(rel)
		if _, ok := want[rel]; !ok && layout.ContentType(rel) != "" && rel != "rsgen-nginx.conf" {
			want[rel] = layout.ContentType(rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{".timemap", ".json-patch", ".zip", "resourcesync"} {
		found := false
		for p := range want {
			found = found || strings.HasSuffix(p, kind) || strings.HasSuffix(p, "/"+kind)
		}
		if !found {
			t.Fatalf("the output holds no %s: the test covers less than it should", kind)
		}
	}

	h, err := serve.New(serve.Options{Dir: s.Out, BaseURL: s.Cfg.BaseURL})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()
	servers := map[string]string{"rsgen serve": srv.URL + "/"}
	if bin := servertest.Nginx(t); bin != "" {
		port := freeport.Get(t)
		servertest.ServeNginx(t, bin, s.Out, port)
		servers["nginx"] = fmt.Sprintf("http://127.0.0.1:%d/", port)
	}
	if bin := apachePath(t); bin != "" {
		port := freeport.Get(t)
		startApache(t, bin, s.Out, port)
		servers["apache"] = fmt.Sprintf("http://127.0.0.1:%d/", port)
	}
	// What a deploy to a web root keeps beside the output, which no host
	// may serve either.
	meta := filepath.Join(s.Out, layout.DeployMetaDir)
	if err := os.Mkdir(meta, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(meta, "manifest"), []byte("deploy manifest"), 0o644); err != nil {
		t.Fatal(err)
	}
	setLink := "<" + s.Cfg.BaseURL + `resourcesync/files/capabilitylist.xml>; rel="resourcesync"`
	hidden := []string{layout.NginxFile, layout.HtaccessFile, layout.DeployMetaDir + "/manifest"}
	client := &http.Client{Timeout: 5 * time.Second}
	for name, base := range servers {
		for p, typ := range want {
			got, status := contentTypeOf(t, client, base+string(layout.AppendEscapedPath(nil, p)))
			if status != http.StatusOK || got != typ {
				t.Errorf("%s: GET /%s: %d %q, want 200 %q", name, p, status, got, typ)
			}
		}
		// The rule that types a file by itself keeps its folder's Link.
		for _, p := range []string{"types/README", "types/blob", "types/sub/copyright", "types/main.go", "types/text.dat", "types/file.txt"} {
			if links := linksOf(t, client, base+p); !slices.Equal(links, []string{setLink}) {
				t.Errorf("%s: GET /%s: Link %q, want %q", name, p, links, setLink)
			}
		}
		memento := base + string(layout.AppendEscapedPath(nil, layout.Memento(t0, "types/README")))
		if resp, err := client.Head(memento); err != nil || resp.Header.Get("Cache-Control") != hosting.ImmutableCacheControl {
			t.Errorf("%s: HEAD %s: %v, want Cache-Control %q as every memento's", name, memento, err, hosting.ImmutableCacheControl)
		}
		for _, p := range hidden {
			if _, status := contentTypeOf(t, client, base+p); status < 400 {
				t.Errorf("%s: GET /%s: %d, want it refused", name, p, status)
			}
		}
	}
}
