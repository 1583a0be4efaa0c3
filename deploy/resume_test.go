package deploy

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/rsgen/rsgen/layout"
)

// objectPut reports whether r uploads one of the site's objects (not the
// manifest or the lock).
func objectPut(r *request) bool {
	return r.method == http.MethodPut && !r.copy && r.key != "" && !strings.HasPrefix(r.key, MetaDir+"/")
}

// uploaded returns the keys that requests uploaded successfully.
func uploaded(log []*request) map[string]bool {
	keys := map[string]bool{}
	for _, r := range log {
		if objectPut(r) && r.status/100 == 2 {
			keys[r.key] = true
		}
	}
	return keys
}

// bucketManifest reads the manifest the bucket holds.
func (v *versity) manifest(t *testing.T, prefix string) *manifest {
	t.Helper()
	out, err := v.client.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(websiteBucket), Key: aws.String(prefix + MetaDir + "/manifest")})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatal(err)
	}
	return mustDecodeManifest(t, data)
}

// TestS3FailedStepStops fails every upload from the 30th on, as a network
// outage would: the deploy fails within a step and starts no later one,
// no document a Destination could read links to a missing object, and
// every key the deploy meant to write is in the bucket's manifest. The
// next deploy completes it without uploading again anything that landed.
func TestS3FailedStepStops(t *testing.T) {
	v := startVersity(t)
	t.Setenv("AWS_MAX_ATTEMPTS", "1") // the proxy's failures stick
	p := newProxy(t, v.endpoint)
	s := exampleSite(t, v.website)
	store := v.store(t, p.srv.URL, "")
	final := s.outputFiles(t, store)

	var mu sync.Mutex
	puts := 0
	p.setFail(func(r *request) bool {
		if !objectPut(r) {
			return false
		}
		mu.Lock()
		defer mu.Unlock()
		puts++
		return puts >= 30
	})
	_, err := Run(context.Background(), s.options(store))
	if err == nil {
		t.Fatal("the deploy succeeded through a failing server")
	}
	first := p.take()
	failedStep := layout.NumSteps
	for _, r := range first {
		if objectPut(r) && r.status/100 != 2 {
			failedStep = min(failedStep, layout.PublishStep(r.key))
		}
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("step %q", failedStep)) {
		t.Errorf("error %q does not name the step %q that failed", err, failedStep)
	}
	for _, r := range first {
		if objectPut(r) && layout.PublishStep(r.key) > failedStep {
			t.Errorf("after step %q failed, %s (step %q) was uploaded", failedStep, r.key, layout.PublishStep(r.key))
		}
	}
	view := replay(t, first, final, bucketView{}, s.cfg.BaseURL, "")
	checkTruth(t, v, view)
	checkView(t, view, final, s.cfg.Out, s.cfg.BaseURL)
	m := v.manifest(t, "")
	for key := range final {
		if e := m.entries[key]; e == nil || e.status != pending {
			t.Errorf("the manifest of the failed deploy does not have %s pending", key)
		}
	}

	// The network is back: the next deploy completes the first.
	p.setFail(nil)
	sum := run(t, s.options(store))
	second := p.take()
	checkResumed(t, sum, second, view, final)
	view = replay(t, second, final, view, s.cfg.BaseURL, "")
	checkView(t, view, final, s.cfg.Out, s.cfg.BaseURL)
	if m := v.manifest(t, ""); m.pendingKeys() != 0 || len(m.entries) != len(final) {
		t.Errorf("after the deploy, the manifest has %d keys, %d pending; want %d, 0", len(m.entries), m.pendingKeys(), len(final))
	}
	checkDestination(t, v.website)
}

// TestS3RetriesATransientFailure fails one upload once: the SDK's retry
// takes it, and the deploy succeeds.
func TestS3RetriesATransientFailure(t *testing.T) {
	v := startVersity(t)
	p := newProxy(t, v.endpoint)
	s := exampleSite(t, v.website)
	store := v.store(t, p.srv.URL, "")
	var once sync.Once
	p.setFail(func(r *request) bool {
		failed := false
		if objectPut(r) {
			once.Do(func() { failed = true })
		}
		return failed
	})
	run(t, s.options(store))
	checkDestination(t, v.website)
}

// TestS3KilledDeployResumes kills a deploy (SIGKILL) while an upload is in
// flight; the next deploy from the same state folder takes over the lock
// the killed one left, and completes the deploy without uploading again
// what landed. A Destination reading meanwhile sees no missing object.
func TestS3KilledDeployResumes(t *testing.T) {
	v := startVersity(t)
	p := newProxy(t, v.endpoint)
	s := exampleSite(t, v.website)
	store := v.store(t, p.srv.URL, "")
	final := s.outputFiles(t, store)

	arrived, release := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	puts := 0
	p.mu.Lock()
	p.before = func(r *request) {
		if !objectPut(r) {
			return
		}
		mu.Lock()
		puts++
		n := puts
		mu.Unlock()
		if n == 40 {
			close(arrived)
		}
		if n >= 40 {
			<-release // held until the deploy is dead
		}
	}
	p.mu.Unlock()
	p.setFail(func(r *request) bool {
		mu.Lock()
		defer mu.Unlock()
		return objectPut(r) && puts >= 40
	})

	p.markConns()
	child := helperDeploy(t, s, p.srv.URL)
	<-arrived
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	close(release)
	p.quiesce()
	p.setFail(nil)
	p.mu.Lock()
	p.before = nil
	p.mu.Unlock()
	view := replay(t, p.take(), final, bucketView{}, s.cfg.BaseURL, "")
	checkTruth(t, v, view)
	checkView(t, view, final, s.cfg.Out, s.cfg.BaseURL)

	var warnings []string
	var wmu sync.Mutex
	opts := s.options(store)
	opts.Notify = func(e Event) {
		if e.Kind == EventWarning {
			wmu.Lock()
			warnings = append(warnings, e.Msg)
			wmu.Unlock()
		}
	}
	sum := run(t, opts)
	if len(warnings) != 1 || !strings.Contains(warnings[0], "took over the lock") {
		t.Errorf("warnings %q; want one about the lock taken over", warnings)
	}
	second := p.take()
	checkResumed(t, sum, second, view, final)
	view = replay(t, second, final, view, s.cfg.BaseURL, "")
	checkView(t, view, final, s.cfg.Out, s.cfg.BaseURL)
	checkDestination(t, v.website)
}

// checkTruth checks that the proxy's log says what the bucket holds.
func checkTruth(t *testing.T, v *versity, view bucketView) {
	t.Helper()
	if truth := v.view(t, ""); !maps.Equal(truth, view) {
		t.Fatalf("the bucket holds %v\nthe requests say %v", truth, view)
	}
}

// checkResumed checks a deploy that completed an interrupted one, which
// left the bucket holding view: nothing that was there with the build's
// bytes was uploaded again, and the deploy says it found all of it.
func checkResumed(t *testing.T, sum *Summary, log []*request, view bucketView, final map[string][32]byte) {
	t.Helper()
	there := 0
	for key, sha := range view {
		if want, ok := final[key]; ok && sha == hex.EncodeToString(want[:]) {
			there++
		}
	}
	if there == 0 {
		t.Fatal("the interrupted deploy uploaded nothing: the test tests nothing")
	}
	for key := range uploaded(log) {
		if want := final[key]; view[key] == hex.EncodeToString(want[:]) {
			t.Errorf("%s was uploaded again, though the interrupted deploy had uploaded it", key)
		}
	}
	if sum.Resumed != there {
		t.Errorf("resumed %d objects; the interrupted deploy uploaded %d", sum.Resumed, there)
	}
}

// helperDeploy runs a deploy of s through endpoint in a child process
// (TestHelperDeploy), so that it can be killed.
func helperDeploy(t *testing.T, s *site, endpoint string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperDeploy$")
	cmd.Env = append(os.Environ(), "RSGEN_DEPLOY_HELPER=1", "HELPER_CONFIG="+s.dir+"/rsgen.toml",
		"HELPER_BASE="+s.cfg.BaseURL, "HELPER_ENDPOINT="+endpoint)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// TestHelperDeploy is the child process of helperDeploy.
func TestHelperDeploy(t *testing.T) {
	if os.Getenv("RSGEN_DEPLOY_HELPER") != "1" {
		t.Skip("runs only as the child of a test")
	}
	s := loadSite(t, os.Getenv("HELPER_CONFIG"), os.Getenv("HELPER_BASE"))
	store, err := OpenS3(context.Background(), S3Options{Bucket: websiteBucket, Endpoint: os.Getenv("HELPER_ENDPOINT")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), s.options(store))
	if !errors.Is(err, context.Canceled) {
		t.Log(err)
	}
}

// pendingKeys counts the keys of unfinished deploys.
func (m *manifest) pendingKeys() int {
	n := 0
	for _, e := range m.entries {
		if e.status == pending {
			n++
		}
	}
	return n
}
