package deploy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/rsgen/rsgen/layout"
)

// S3Options says which bucket to publish to, and how to reach it.
type S3Options struct {
	Bucket string
	Prefix string // "" or a folder such as "site"; keys are Prefix/path
	// Endpoint is the URL of an S3-compatible service; "" takes the SDK's
	// own (AWS_ENDPOINT_URL, the profile, else AWS). With a custom
	// endpoint, buckets are addressed by path (endpoint/bucket/key), which
	// every S3-compatible service understands.
	Endpoint string
	// Region overrides AWS_REGION and the profile's; with a custom
	// endpoint and none given, it is us-east-1.
	Region string
	// MultipartAbove is the size above which an object is uploaded in
	// parts of PartSize (at most 10,000 of them); 0 takes 256 MiB and
	// 64 MiB. S3 takes at most 5 GiB in one PUT.
	MultipartAbove, PartSize int64
}

// S3Store publishes to an S3 bucket, or to any S3-compatible service,
// through aws-sdk-go-v2. Credentials come from the SDK's standard sources
// (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, a profile, an instance
// role). Request checksums are sent only where an operation requires one:
// the SDK's default (a CRC32 trailer on every upload) is refused by
// several S3-compatible services. Every upload is signed with the SHA-256
// the deploy read instead, so S3 refuses bytes that changed since.
type S3Store struct {
	client *s3.Client
	bucket string
	prefix string // "" or ending in "/"
	name   string
	reqs   *s3Requests

	multipartAbove, partSize int64
}

// shaMetadata is the user metadata (x-amz-meta-rsgen-sha256) holding the
// SHA-256 of an object's bytes in hex, which other tools can read too.
const shaMetadata = "rsgen-sha256"

// OpenS3 returns the store of a bucket.
func OpenS3(ctx context.Context, opts S3Options) (*S3Store, error) {
	reqs := &s3Requests{}
	loads := []func(*awsconfig.LoadOptions) error{
		awsconfig.WithHTTPClient(awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
			tr.MaxIdleConnsPerHost = uploadJobs
		})),
		awsconfig.WithRequestChecksumCalculation(aws.RequestChecksumCalculationWhenRequired),
		awsconfig.WithResponseChecksumValidation(aws.ResponseChecksumValidationWhenRequired),
	}
	if opts.Region != "" {
		loads = append(loads, awsconfig.WithRegion(opts.Region))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, loads...)
	if err != nil {
		return nil, fmt.Errorf("deploy to s3://%s: %w", opts.Bucket, err)
	}
	// Wrapped once loaded: the SDK configures its own client (a CA
	// bundle from AWS_CA_BUNDLE, say) and no other.
	cfg.HTTPClient = &countingClient{base: cfg.HTTPClient, reqs: reqs}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		if opts.Endpoint != "" {
			o.BaseEndpoint = aws.String(opts.Endpoint)
		}
		if o.BaseEndpoint != nil {
			o.UsePathStyle = true
			if o.Region == "" {
				o.Region = "us-east-1" // S3-compatible services take any
			}
		}
	})
	if ep := client.Options().BaseEndpoint; ep != nil && strings.Contains(*ep, "@") {
		// From AWS_ENDPOINT_URL or the profile: the SDK drops the
		// credentials, which rsgen would print in its summaries.
		return nil, fmt.Errorf("deploy to s3://%s: the S3 endpoint (AWS_ENDPOINT_URL, or the profile's endpoint_url) holds credentials (user:password@): "+
			"give them to the AWS SDK as AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, a profile or a role, and the endpoint without them", opts.Bucket)
	}
	if client.Options().Region == "" {
		return nil, fmt.Errorf("deploy to s3://%s: no region: set AWS_REGION, or region in [deploy]", opts.Bucket)
	}
	s := &S3Store{client: client, bucket: opts.Bucket, reqs: reqs,
		multipartAbove: opts.MultipartAbove, partSize: opts.PartSize}
	if s.multipartAbove <= 0 {
		s.multipartAbove = 256 << 20
	}
	if s.partSize <= 0 {
		s.partSize = 64 << 20
	}
	if p := strings.Trim(opts.Prefix, "/"); p != "" {
		s.prefix = p + "/"
	}
	s.name = "s3://" + path.Join(opts.Bucket, s.prefix)
	if opts.Endpoint != "" {
		s.name += " at " + opts.Endpoint
	}
	return s, nil
}

func (s *S3Store) String() string     { return s.name }
func (s *S3Store) KeepsHeaders() bool { return true }

// hostingFiles are the configuration files rsgen writes for web servers
// and static hosts ([publish] targets): a bucket has no use for them, and
// should not show them.
var hostingFiles = func() map[string]bool {
	m := map[string]bool{}
	for _, f := range layout.HostingFiles {
		m[f] = true
	}
	return m
}()

// Publishes leaves out the hosting files, and refuses a file S3 cannot
// hold: an S3 key is UTF-8, of at most 1,024 bytes. (A web root holds
// any name a file system does; versitygw, over a folder, does too.)
func (s *S3Store) Publishes(rel string) (bool, error) {
	switch {
	case hostingFiles[rel]:
		return false, nil
	case !utf8.ValidString(rel):
		return false, fmt.Errorf("%s: %q cannot be an S3 key: its name is not UTF-8 (rename its source file)", s.name, rel)
	case len(s.prefix)+len(rel) > maxKeyBytes:
		return false, fmt.Errorf("%s: %q cannot be an S3 key: with the prefix it is longer than %d bytes", s.name, rel, maxKeyBytes)
	}
	return true, nil
}

// maxKeyBytes is the longest S3 key.
const maxKeyBytes = 1024

func (s *S3Store) key(k string) *string { return aws.String(s.prefix + k) }

func (s *S3Store) Requests() Requests { return s.reqs.snapshot() }

// Put uploads obj in one PUT, or in parts above MultipartAbove, with its
// headers and its SHA-256 as metadata.
func (s *S3Store) Put(ctx context.Context, obj *Object, body io.ReaderAt, ifAbsent bool) error {
	var err error
	if obj.Size > s.multipartAbove {
		err = s.putParts(ctx, obj, body, ifAbsent)
	} else {
		in := &s3.PutObjectInput{Bucket: &s.bucket, Key: s.key(obj.Key), Body: io.NewSectionReader(body, 0, obj.Size),
			ContentLength: aws.Int64(obj.Size), Metadata: map[string]string{shaMetadata: obj.sumHex()}}
		in.ContentType, in.CacheControl = headerPtrs(obj.Headers)
		if ifAbsent {
			in.IfNoneMatch = aws.String("*")
		}
		_, err = s.client.PutObject(ctx, in, signedWith(obj.sumHex()))
	}
	if ifAbsent && httpStatus(err) == http.StatusPreconditionFailed {
		return fmt.Errorf("upload %s: %w", obj.Key, ErrExists)
	}
	if err != nil {
		return fmt.Errorf("upload %s: %w", obj.Key, err)
	}
	return nil
}

// putParts uploads obj as a multipart upload, aborted if it fails.
func (s *S3Store) putParts(ctx context.Context, obj *Object, body io.ReaderAt, ifAbsent bool) error {
	create := &s3.CreateMultipartUploadInput{Bucket: &s.bucket, Key: s.key(obj.Key), Metadata: map[string]string{shaMetadata: obj.sumHex()}}
	create.ContentType, create.CacheControl = headerPtrs(obj.Headers)
	up, err := s.client.CreateMultipartUpload(ctx, create)
	if err != nil {
		return err
	}
	partSize := max(s.partSize, (obj.Size+9999)/10000)
	var parts []types.CompletedPart
	for n, off := int32(1), int64(0); off < obj.Size; n, off = n+1, off+partSize {
		size := min(partSize, obj.Size-off)
		out, err := s.client.UploadPart(ctx, &s3.UploadPartInput{Bucket: &s.bucket, Key: create.Key, UploadId: up.UploadId,
			PartNumber: aws.Int32(n), Body: io.NewSectionReader(body, off, size), ContentLength: aws.Int64(size)})
		if err != nil {
			s.abort(create.Key, up.UploadId)
			return err
		}
		parts = append(parts, types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(n)})
	}
	complete := &s3.CompleteMultipartUploadInput{Bucket: &s.bucket, Key: create.Key, UploadId: up.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}}
	if ifAbsent {
		complete.IfNoneMatch = aws.String("*")
	}
	if _, err := s.client.CompleteMultipartUpload(ctx, complete); err != nil {
		s.abort(create.Key, up.UploadId)
		return err
	}
	return nil
}

// abort gives a failed multipart upload's parts up, even when the deploy
// is being cancelled, so that the bucket does not keep (and bill) them.
func (s *S3Store) abort(key, uploadID *string) {
	s.client.AbortMultipartUpload(context.Background(), &s3.AbortMultipartUploadInput{Bucket: &s.bucket, Key: key, UploadId: uploadID})
}

// Reheader copies the object onto itself with the new headers: S3 sends
// no bytes for that.
func (s *S3Store) Reheader(ctx context.Context, obj *Object) error {
	in := &s3.CopyObjectInput{Bucket: &s.bucket, Key: s.key(obj.Key), CopySource: aws.String(s.copySource(obj.Key)),
		MetadataDirective: types.MetadataDirectiveReplace, Metadata: map[string]string{shaMetadata: obj.sumHex()}}
	in.ContentType, in.CacheControl = headerPtrs(obj.Headers)
	if _, err := s.client.CopyObject(ctx, in); err != nil {
		return fmt.Errorf("re-apply the headers of %s: %w", obj.Key, err)
	}
	return nil
}

// copySource is the URL-encoded bucket/key a copy reads from.
func (s *S3Store) copySource(key string) string {
	segs := strings.Split(s.prefix+key, "/")
	for i, seg := range segs {
		segs[i] = url.PathEscape(seg)
	}
	return url.PathEscape(s.bucket) + "/" + strings.Join(segs, "/")
}

// Stat asks for the object's headers and metadata (HEAD).
func (s *S3Store) Stat(ctx context.Context, key string) (*Object, error) {
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: s.key(key)})
	if httpStatus(err) == http.StatusNotFound {
		return nil, fmt.Errorf("stat %s: %w", key, ErrNotExist)
	}
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", key, err)
	}
	obj := &Object{Key: key, Size: aws.ToInt64(out.ContentLength),
		Headers: Headers{ContentType: aws.ToString(out.ContentType), CacheControl: aws.ToString(out.CacheControl)}}
	if sum, ok := parseSHA256(out.Metadata[shaMetadata]); ok {
		obj.SHA256 = sum // unknown (zero) unless rsgen wrote it
	}
	return obj, nil
}

// Delete removes the objects in batches of 1,000, one request each, by
// key: what an object holds is not asked (a HEAD per key), and a bucket's
// manifest is only as safe as the bucket.
func (s *S3Store) Delete(ctx context.Context, objs []Object, _ func(key, why string)) error {
	for len(objs) > 0 {
		batch := objs[:min(len(objs), deleteBatch)]
		objs = objs[len(batch):]
		ids := make([]types.ObjectIdentifier, len(batch))
		for i, obj := range batch {
			ids[i] = types.ObjectIdentifier{Key: s.key(obj.Key)}
		}
		out, err := s.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: &s.bucket,
			Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)}})
		if err != nil {
			return fmt.Errorf("delete: %w", err)
		}
		if len(out.Errors) > 0 {
			e := out.Errors[0]
			return fmt.Errorf("delete %s: %s: %s", strings.TrimPrefix(aws.ToString(e.Key), s.prefix), aws.ToString(e.Code), aws.ToString(e.Message))
		}
	}
	return nil
}

// Tidy has nothing to do: an upload that does not complete leaves no
// object. (The parts of a multipart upload whose deploy was killed stay
// until the bucket's lifecycle rules abort them.)
func (s *S3Store) Tidy(context.Context, iter.Seq[string]) error { return nil }

func (s *S3Store) metaKey(name string) *string { return s.key(MetaDir + "/" + name) }

func (s *S3Store) ReadMeta(ctx context.Context, name, etag string, w io.Writer) (string, error) {
	in := &s3.GetObjectInput{Bucket: &s.bucket, Key: s.metaKey(name)}
	if etag != "" {
		in.IfNoneMatch = aws.String(etag)
	}
	out, err := s.client.GetObject(ctx, in)
	switch httpStatus(err) {
	case http.StatusNotModified:
		return etag, ErrNotModified
	case http.StatusNotFound:
		return "", fmt.Errorf("%s/%s: %w", MetaDir, name, ErrNotExist)
	}
	if err != nil {
		return "", fmt.Errorf("read %s/%s: %w", MetaDir, name, err)
	}
	defer out.Body.Close()
	if _, err := io.Copy(w, out.Body); err != nil {
		return "", fmt.Errorf("read %s/%s: %w", MetaDir, name, err)
	}
	return aws.ToString(out.ETag), nil
}

func (s *S3Store) WriteMeta(ctx context.Context, name string, body io.ReaderAt, size int64) (string, error) {
	out, err := s.client.PutObject(ctx, &s3.PutObjectInput{Bucket: &s.bucket, Key: s.metaKey(name), Body: io.NewSectionReader(body, 0, size),
		ContentLength: aws.Int64(size), ContentType: aws.String("application/gzip"), CacheControl: aws.String("no-store")})
	if err != nil {
		return "", fmt.Errorf("write %s/%s: %w", MetaDir, name, err)
	}
	return aws.ToString(out.ETag), nil
}

// headerPtrs returns the headers as the SDK takes them: nil leaves one out.
func headerPtrs(h Headers) (contentType, cacheControl *string) {
	if h.ContentType != "" {
		contentType = aws.String(h.ContentType)
	}
	if h.CacheControl != "" {
		cacheControl = aws.String(h.CacheControl)
	}
	return contentType, cacheControl
}

// signedWith signs a request's payload with the SHA-256 the deploy read
// (hex), instead of reading the body once more to compute it: S3 checks
// the bytes it receives against it, and refuses bytes that changed.
func signedWith(sum string) func(*s3.Options) {
	return func(o *s3.Options) {
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			return stack.Finalize.Insert(middleware.FinalizeMiddlewareFunc("rsgenPayloadHash",
				func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
					return next.HandleFinalize(v4.SetPayloadHash(ctx, sum), in)
				}), "ComputePayloadHash", middleware.Before)
		})
	}
}

// httpStatus returns the HTTP status of a failed request, or 0.
func httpStatus(err error) int {
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// s3Requests counts requests as S3 bills them.
type s3Requests struct {
	put, copy, get, head, del, other atomic.Int64
	bytes                            atomic.Int64
}

func (r *s3Requests) snapshot() Requests {
	return Requests{Put: int(r.put.Load()), Copy: int(r.copy.Load()), Get: int(r.get.Load()), Head: int(r.head.Load()),
		Delete: int(r.del.Load()), Other: int(r.other.Load()), BytesSent: r.bytes.Load()}
}

// countingClient counts every request it sends, retries included.
type countingClient struct {
	base aws.HTTPClient
	reqs *s3Requests
}

func (t *countingClient) Do(r *http.Request) (*http.Response, error) {
	switch {
	case r.Method == http.MethodPut && r.Header.Get("X-Amz-Copy-Source") != "":
		t.reqs.copy.Add(1)
	case r.Method == http.MethodPut:
		t.reqs.put.Add(1)
	case r.Method == http.MethodGet:
		t.reqs.get.Add(1)
	case r.Method == http.MethodHead:
		t.reqs.head.Add(1)
	case r.Method == http.MethodDelete || r.Method == http.MethodPost && r.URL.Query().Has("delete"):
		t.reqs.del.Add(1)
	default:
		t.reqs.other.Add(1)
	}
	if r.ContentLength > 0 {
		t.reqs.bytes.Add(r.ContentLength)
	}
	return t.base.Do(r)
}
