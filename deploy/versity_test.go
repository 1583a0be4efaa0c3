package deploy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/rsgen/rsgen/internal/freeport"
)

// The S3 tests run against versitygw, a real S3 server over a local
// folder (github.com/versity/versitygw, Apache-2.0), installed apart from
// rsgen's module:
//
//	GOBIN=$HOME/go/bin go install github.com/versity/versitygw/cmd/versitygw@v1.8.0
//
// .ci/deploy-tests installs it and sets RSGEN_REQUIRE_VERSITYGW=1, which
// turns its absence into a failure instead of a skip.

// websiteBucket is the bucket the website endpoint serves at
// http://localhost:PORT/: versitygw names the bucket by the request's host.
const websiteBucket = "localhost"

// versity is a running versitygw.
type versity struct {
	endpoint string // the S3 API, http://127.0.0.1:PORT
	website  string // the website endpoint serving websiteBucket, http://localhost:PORT/
	client   *s3.Client
}

// versityBinary finds versitygw on PATH or in $HOME/go/bin.
func versityBinary() string {
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p
	}
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, "go", "bin", "versitygw")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// startVersity starts versitygw on free ports with a fresh folder, makes
// websiteBucket public with website hosting, and points the SDK's
// environment at it. It skips the test when versitygw is not installed,
// unless RSGEN_REQUIRE_VERSITYGW=1.
func startVersity(t *testing.T) *versity {
	t.Helper()
	bin := versityBinary()
	if bin == "" {
		if os.Getenv("RSGEN_REQUIRE_VERSITYGW") == "1" {
			t.Fatal("versitygw is not installed, and RSGEN_REQUIRE_VERSITYGW=1")
		}
		t.Skip("versitygw is not installed (GOBIN=$HOME/go/bin go install github.com/versity/versitygw/cmd/versitygw@v1.8.0)")
	}
	const access, secret = "rsgen-test-access", "rsgen-test-secret-key"
	v := &versity{}
	for attempt := 1; ; attempt++ {
		apiPort, webPort := freeport.Get(t), freeport.Get(t)
		v.endpoint = fmt.Sprintf("http://127.0.0.1:%d", apiPort)
		v.website = fmt.Sprintf("http://localhost:%d/", webPort)
		cmd := exec.Command(bin, "--port", fmt.Sprintf("127.0.0.1:%d", apiPort), "--website", fmt.Sprintf("127.0.0.1:%d", webPort),
			"--access", access, "--secret", secret, "--quiet", "--health", "/health", "posix", t.TempDir())
		err := startServer(t, cmd, v.endpoint+"/health")
		if err == nil {
			break
		}
		// Another process may have bound a port between freeport's
		// check and versitygw's bind; new ports make that a retry
		// rather than a failed run.
		if attempt == 3 {
			t.Fatal(err)
		}
		t.Logf("versitygw, attempt %d: %v; trying other ports", attempt, err)
	}
	for k, val := range map[string]string{"AWS_ACCESS_KEY_ID": access, "AWS_SECRET_ACCESS_KEY": secret, "AWS_REGION": "us-east-1",
		"AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull, "AWS_EC2_METADATA_DISABLED": "true",
		"AWS_ENDPOINT_URL": "", "AWS_PROFILE": ""} {
		t.Setenv(k, val)
	}
	cfg, err := awsconfig.LoadDefaultConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	v.client = s3.NewFromConfig(cfg, func(o *s3.Options) { o.BaseEndpoint = aws.String(v.endpoint); o.UsePathStyle = true })
	v.makeWebsite(t, websiteBucket)
	return v
}

// startServer starts cmd, a versitygw, and waits until health answers
// 200, versitygw's readiness. It returns an error if the server exits or
// is not ready within 20 s; it stops the server when the test ends.
func startServer(t *testing.T, cmd *exec.Cmd, health string) error {
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-exited })
	// A short timeout per request: whatever else holds the port may
	// accept connections and never answer.
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := client.Get(health)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-exited:
			return fmt.Errorf("versitygw exited before it was ready at %s: %s", health, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-exited // stderr is complete
			return fmt.Errorf("versitygw did not become ready at %s: %v\n%s", health, err, stderr.String())
		}
		time.Sleep(10 * time.Millisecond) // polling a health check: the server has no other readiness signal
	}
}

// makeWebsite creates bucket, readable by anyone, served by the website
// endpoint.
func (v *versity) makeWebsite(t *testing.T, bucket string) {
	ctx := context.Background()
	if _, err := v.client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatal(err)
	}
	_, err := v.client.PutBucketWebsite(ctx, &s3.PutBucketWebsiteInput{Bucket: &bucket,
		WebsiteConfiguration: &types.WebsiteConfiguration{IndexDocument: &types.IndexDocument{Suffix: aws.String("index.html")}}})
	if err != nil {
		t.Fatal(err)
	}
	policy := fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":["s3:GetObject"],"Resource":["arn:aws:s3:::%s/*"]}]}`, bucket)
	if _, err := v.client.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: &bucket, Policy: &policy}); err != nil {
		t.Fatal(err)
	}
}

// store opens the S3 store of bucket/prefix at endpoint (the server, or a
// proxy in front of it).
func (v *versity) store(t *testing.T, endpoint, prefix string) *S3Store {
	s, err := OpenS3(context.Background(), S3Options{Bucket: websiteBucket, Prefix: prefix, Endpoint: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// keys lists the keys of the bucket below prefix.
func (v *versity) keys(t *testing.T, prefix string) []string {
	var keys []string
	p := s3.NewListObjectsV2Paginator(v.client, &s3.ListObjectsV2Input{Bucket: aws.String(websiteBucket), Prefix: &prefix})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Contents {
			keys = append(keys, strings.TrimPrefix(aws.ToString(o.Key), prefix))
		}
	}
	return keys
}

// view returns what the bucket holds below prefix, by key: the SHA-256
// its metadata says. A deploy that was cancelled or killed leaves
// requests whose outcome its client never learnt; the test learns it
// here.
func (v *versity) view(t *testing.T, prefix string) bucketView {
	t.Helper()
	view := bucketView{}
	for _, k := range v.keys(t, prefix) {
		if strings.HasPrefix(k, MetaDir+"/") {
			continue
		}
		out, err := v.client.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(websiteBucket), Key: aws.String(prefix + k)})
		if err != nil {
			t.Fatal(err)
		}
		view[k] = out.Metadata[shaMetadata]
	}
	return view
}

// request is one request through a proxy, as recorded.
type request struct {
	seq      int // when it arrived, on the proxy's clock (one tick per arrival or response)
	done     int // when its response was sent; 0 while in flight
	method   string
	key      string // the object key, without the bucket
	copy     bool   // a server-side copy
	status   int
	sha      string // x-amz-content-sha256 of a PUT
	body     []byte // of a PUT or POST
	deleted  []string
	received time.Time
}

// proxy is a reverse proxy in front of versitygw that records every
// request, and fails those that fail says to (with 503, which the SDK
// retries, so a failure that should stick must keep failing). A request
// it forwards is completed even when its client goes away (cancelled, or
// killed), so that the log says what the bucket holds.
type proxy struct {
	srv      *httptest.Server
	mu       sync.Mutex
	idle     *sync.Cond // signalled when inflight drops to 0 or a connection closes
	inflight int
	// conns are the open connections, true for those open at the last
	// markConns, which quiesce does not wait for.
	conns  map[net.Conn]bool
	log    []*request
	clock  int
	fail   func(r *request) bool
	before func(r *request) // called before forwarding, outside the lock
}

func newProxy(t *testing.T, target string) *proxy {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{conns: map[net.Conn]bool{}}
	p.idle = sync.NewCond(&p.mu)
	rp := httputil.NewSingleHostReverseProxy(u) // keeps the Host header, which the signature covers
	rp.ErrorHandler = func(w http.ResponseWriter, _ *http.Request, _ error) { w.WriteHeader(http.StatusBadGateway) }
	p.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.inflight++
		p.mu.Unlock()
		defer func() {
			p.mu.Lock()
			if p.inflight--; p.inflight == 0 {
				p.idle.Broadcast()
			}
			p.mu.Unlock()
		}()
		r = r.WithContext(context.WithoutCancel(r.Context()))
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return // the client went away while sending: nothing forwarded
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := &request{method: r.Method, key: objectKey(r.URL.Path), copy: r.Header.Get("X-Amz-Copy-Source") != "",
			sha: r.Header.Get("X-Amz-Content-Sha256"), received: time.Now()}
		if r.Method == http.MethodPut || r.Method == http.MethodPost {
			rec.body = body
		}
		if r.Method == http.MethodPost && r.URL.Query().Has("delete") {
			rec.deleted = deletedKeys(body)
		}
		p.mu.Lock()
		p.clock++
		rec.seq = p.clock
		p.log = append(p.log, rec)
		fail := p.fail
		before := p.before
		p.mu.Unlock()
		if before != nil {
			before(rec)
		}
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		if fail != nil && fail(rec) {
			http.Error(sw, "<Error><Code>SlowDown</Code><Message>injected failure</Message></Error>", http.StatusServiceUnavailable)
		} else {
			rp.ServeHTTP(sw, r)
		}
		p.mu.Lock()
		p.clock++
		rec.done, rec.status = p.clock, sw.status
		p.mu.Unlock()
	}))
	p.srv.Config.ConnState = p.countConns
	p.srv.Start()
	t.Cleanup(p.srv.Close)
	return p
}

// countConns keeps the open connections, for quiesce.
func (p *proxy) countConns(c net.Conn, state http.ConnState) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch state {
	case http.StateNew:
		p.conns[c] = false
	case http.StateClosed, http.StateHijacked:
		delete(p.conns, c)
		p.idle.Broadcast()
	}
}

// markConns marks the connections open now (this process's clients'),
// which quiesce does not wait for.
func (p *proxy) markConns() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		p.conns[c] = true
	}
}

// quiesce waits until the connections opened since markConns are all
// closed, as a killed client's are: a request it wrote whole before it
// died is still read and handled by the server after the client is gone,
// and take must not return before that request is in the log.
func (p *proxy) quiesce() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.inflight > 0 || slices.Contains(slices.Collect(maps.Values(p.conns)), false) {
		p.idle.Wait()
	}
}

// objectKey returns the key of a path-style request path, /bucket/key.
func objectKey(p string) string {
	p = strings.TrimPrefix(p, "/")
	_, key, _ := strings.Cut(p, "/")
	return key
}

// deletedKeys returns the keys of a DeleteObjects request body.
func deletedKeys(body []byte) []string {
	var keys []string
	for _, part := range strings.Split(string(body), "<Key>")[1:] {
		k, _, _ := strings.Cut(part, "</Key>")
		keys = append(keys, strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "&quot;", `"`, "&apos;", "'").Replace(k))
	}
	return keys
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) { w.status = code; w.ResponseWriter.WriteHeader(code) }

// take returns the log once no request is in flight, and clears it.
func (p *proxy) take() []*request {
	p.mu.Lock()
	for p.inflight > 0 {
		p.idle.Wait()
	}
	defer p.mu.Unlock()
	log := p.log
	p.log = nil
	return log
}

func (p *proxy) setFail(fail func(*request) bool) {
	p.mu.Lock()
	p.fail = fail
	p.mu.Unlock()
}

// TestVersityOnTakenPort checks what startVersity's retry relies on: a
// versitygw whose port another process holds is reported as exited, not
// waited for until the deadline or, worse, taken for ready.
func TestVersityOnTakenPort(t *testing.T) {
	bin := versityBinary()
	if bin == "" {
		t.Skip("versitygw is not installed")
	}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	cmd := exec.Command(bin, "--port", addr, "--access", "a", "--secret", "s", "--quiet", "--health", "/health", "posix", t.TempDir())
	err = startServer(t, cmd, "http://"+addr+"/health")
	if err == nil || !strings.Contains(err.Error(), "exited") {
		t.Fatalf("versitygw on a taken port: %v, want it reported as exited", err)
	}
}
