package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// The lock of a bucket is an object, MetaDir/lock, holding its Holder. It
// is created with If-None-Match: *, so that of two deploys starting at once
// exactly one gets it, and renewed every lockRenew with If-Match on its
// entity tag, so that a deploy that lost it (taken over as stale) learns
// so at its next renewal and stops. A lock not renewed for lockTTL, by
// the bucket's clock (its Last-Modified against the Date of the reply), is
// stale: its deploy is gone, and the next deploy takes it over, again with
// If-Match, so that only one can.

// lockTTL is how long a bucket's lock stays valid without renewal.
const lockTTL = 2 * time.Minute

// lockRenew is how often a deploy renews its lock.
const lockRenew = lockTTL / 4

// Lock takes the bucket's lock; see the comment above.
func (s *S3Store) Lock(ctx context.Context, holder Holder, breakLock bool) (Lease, error) {
	body, err := json.Marshal(holder)
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		etag, err := s.putLock(ctx, body, "")
		if err == nil {
			return s.startLease(body, etag, nil), nil
		}
		if httpStatus(err) != http.StatusPreconditionFailed {
			return nil, fmt.Errorf("lock %s: %w", s, err)
		}
		cur, err := s.readLock(ctx)
		if err == errLockGone && attempt < 3 {
			continue // released meanwhile: try again
		}
		if err != nil {
			return nil, fmt.Errorf("lock %s: %w", s, err)
		}
		gone := breakLock || cur.holder.Host == holder.Host && cur.holder.State == holder.State ||
			stale(cur.renewed, cur.now)
		locked := &LockedError{Store: s.String(), Holder: cur.holder, Renewed: cur.renewed, Expires: lockTTL}
		if !gone {
			return nil, locked
		}
		etag, err = s.putLock(ctx, body, cur.etag)
		if httpStatus(err) == http.StatusPreconditionFailed {
			return nil, locked // another deploy took it over first
		}
		if err != nil {
			return nil, fmt.Errorf("lock %s: %w", s, err)
		}
		return s.startLease(body, etag, &cur.holder), nil
	}
}

// stale reports whether a lock last renewed at renewed is stale at now,
// both by the bucket's clock.
func stale(renewed, now time.Time) bool { return now.Sub(renewed) >= lockTTL }

// putLock writes the lock object: only where there is none when ifMatch
// is "", else only over the lock whose entity tag is ifMatch.
func (s *S3Store) putLock(ctx context.Context, body []byte, ifMatch string) (string, error) {
	in := &s3.PutObjectInput{Bucket: &s.bucket, Key: s.metaKey("lock"), Body: bytes.NewReader(body),
		ContentLength: aws.Int64(int64(len(body))), ContentType: aws.String("application/json"), CacheControl: aws.String("no-store")}
	if ifMatch == "" {
		in.IfNoneMatch = aws.String("*")
	} else {
		in.IfMatch = aws.String(ifMatch)
	}
	out, err := s.client.PutObject(ctx, in)
	if err != nil {
		return "", err
	}
	return aws.ToString(out.ETag), nil
}

// heldLock is the lock object as read.
type heldLock struct {
	holder       Holder
	etag         string
	renewed, now time.Time // Last-Modified, and the Date of the reply
}

var errLockGone = fmt.Errorf("the lock was released")

func (s *S3Store) readLock(ctx context.Context) (*heldLock, error) {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: s.metaKey("lock")})
	if httpStatus(err) == http.StatusNotFound {
		return nil, errLockGone
	}
	if err != nil {
		return nil, err
	}
	defer out.Body.Close()
	data, err := io.ReadAll(io.LimitReader(out.Body, 1<<16))
	if err != nil {
		return nil, err
	}
	l := &heldLock{etag: aws.ToString(out.ETag), renewed: aws.ToTime(out.LastModified)}
	json.Unmarshal(data, &l.holder) // a lock someone else wrote is a lock all the same
	var ok bool
	if l.now, ok = awsmiddleware.GetServerTime(out.ResultMetadata); !ok {
		l.now = time.Now()
	}
	return l, nil
}

// s3Lease is a held bucket lock, renewed in the background.
type s3Lease struct {
	s        *S3Store
	body     []byte
	previous *Holder

	mu   sync.Mutex
	etag string
	err  error

	lost chan struct{}
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

func (s *S3Store) startLease(body []byte, etag string, previous *Holder) *s3Lease {
	l := &s3Lease{s: s, body: body, etag: etag, previous: previous,
		lost: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	go l.renew()
	return l
}

// renew renews the lock every lockRenew until Release, or until it is
// lost.
func (l *s3Lease) renew() {
	defer close(l.done)
	tick := time.NewTicker(lockRenew)
	defer tick.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-tick.C:
		}
		if l.renewOnce() {
			return
		}
	}
}

// renewOnce renews the lock once, and reports whether it is lost: a
// renewal refused because the lock changed hands (412), or is gone (404:
// taken over and released), loses the lease; any
// other failure is tried again at the next tick (the deploy's own requests
// fail meanwhile, if the bucket cannot be reached).
func (l *s3Lease) renewOnce() (lost bool) {
	l.mu.Lock()
	etag := l.etag
	l.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), lockRenew)
	defer cancel()
	next, err := l.s.putLock(ctx, l.body, etag)
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case err == nil:
		l.etag = next
	case httpStatus(err) == http.StatusPreconditionFailed || httpStatus(err) == http.StatusNotFound:
		l.err = fmt.Errorf("lost the lock of %s: another deploy took it over", l.s)
		close(l.lost)
		return true
	}
	return false
}

func (l *s3Lease) Lost() <-chan struct{} { return l.lost }
func (l *s3Lease) Previous() *Holder     { return l.previous }

func (l *s3Lease) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Release stops renewing and deletes the lock, unless it was lost.
func (l *s3Lease) Release(ctx context.Context) error {
	var err error
	l.once.Do(func() {
		close(l.stop)
		<-l.done
		if l.Err() != nil {
			return
		}
		_, err = l.s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &l.s.bucket, Key: l.s.metaKey("lock")})
		if err != nil {
			err = fmt.Errorf("release the lock of %s: %w", l.s, err)
		}
	})
	return err
}
