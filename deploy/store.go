package deploy

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"iter"
	"time"

	"github.com/rsgen/rsgen/layout"
)

// Object is one published file as a store holds it: its key (the output
// path, below the store's prefix), its length, the SHA-256 of its bytes
// and the headers it is served with.
type Object struct {
	Key     string
	Size    int64
	SHA256  [32]byte
	Headers Headers
}

// sumHex is the object's SHA-256 in lowercase hex.
func (o *Object) sumHex() string { return hex.EncodeToString(o.SHA256[:]) }

// same reports whether o and p hold the same bytes with the same headers.
func (o *Object) same(p *Object) bool {
	return o.Size == p.Size && o.SHA256 == p.SHA256 && o.Headers == p.Headers
}

// Store is where a deploy publishes: an S3 bucket below a prefix
// (S3Store), or a web server's document root (DirStore). Keys are output
// paths, slash-separated and clean. Every method may be called from
// several goroutines at once.
type Store interface {
	// String names the store in messages, such as s3://bucket/prefix.
	String() string
	// KeepsHeaders reports whether objects carry their own headers (S3);
	// a web root's headers come from the server's configuration instead.
	KeepsHeaders() bool
	// Publishes reports whether the output file at rel belongs on this
	// kind of store: a bucket has no use for a web server's configuration.
	// It fails when the file belongs there but the store cannot hold it
	// at rel, which fails the deploy before it writes anything.
	Publishes(rel string) (bool, error)
	// Put writes obj from body, which holds obj.Size bytes whose SHA-256
	// is obj.SHA256; a store that can verify that does, and fails. With
	// ifAbsent the write happens only where no object is, and fails with
	// ErrExists otherwise (If-None-Match: *).
	Put(ctx context.Context, obj *Object, body io.ReaderAt, ifAbsent bool) error
	// Reheader applies obj.Headers to the object at obj.Key, which holds
	// obj's bytes already, without sending them again.
	Reheader(ctx context.Context, obj *Object) error
	// Stat returns what the store holds at key, or an error wrapping
	// ErrNotExist. A SHA256 the store cannot tell is zero.
	Stat(ctx context.Context, key string) (*Object, error)
	// Delete removes the objects at objs' keys; a key with no object is
	// no error. A store that can tell (a web root) removes only what holds
	// an object's bytes, and reports any other file to kept, with why,
	// leaving it in place.
	Delete(ctx context.Context, objs []Object, kept func(key, why string)) error
	// ReadMeta copies the deploy's own file name (the manifest) to w and
	// returns its entity tag, or ErrNotModified when its tag is still
	// etag, or an error wrapping ErrNotExist. A failure may leave part of
	// the file written to w.
	ReadMeta(ctx context.Context, name, etag string, w io.Writer) (newETag string, err error)
	// WriteMeta replaces the deploy's own file name with the size bytes
	// of body and returns its new entity tag. The file is streamed, never
	// held: a manifest of millions of keys is hundreds of megabytes.
	WriteMeta(ctx context.Context, name string, body io.ReaderAt, size int64) (etag string, err error)
	// Tidy removes what deploys killed meanwhile left in the folders
	// dirs and in MetaDir, where they wrote: a web root's temporary
	// files. The caller holds the store's lock, so that no other deploy
	// is writing them.
	Tidy(ctx context.Context, dirs iter.Seq[string]) error
	// Lock takes the store's deploy lock for holder, so that two deploys
	// never interleave: it fails with a *LockedError while another deploy
	// holds it. The caller holds the local lock of this store in its state
	// folder (see Run), so a lock held by the same host and state folder is
	// left by a deploy that is gone, and is taken over; breakLock takes
	// over any lock, from a holder the user knows to be gone.
	Lock(ctx context.Context, holder Holder, breakLock bool) (Lease, error)
	// Requests returns the requests made so far, by kind.
	Requests() Requests
}

// MetaDir is the folder, below the store's prefix, of the deploy's own
// files: the manifest and the lock. No output path may lie in it.
const MetaDir = layout.DeployMetaDir

// The errors of a Store.
var (
	// ErrNotExist is wrapped by the errors for an object that is not there.
	ErrNotExist = errors.New("no such object")
	// ErrExists is returned by Put with ifAbsent when an object is there.
	ErrExists = errors.New("an object exists at that key")
	// ErrNotModified is returned by ReadMeta when the file still has the
	// entity tag the caller has.
	ErrNotModified = errors.New("not modified")
)

// Holder says who holds a deploy lock, for messages and for recognising a
// lock left by a deploy that was killed.
type Holder struct {
	Owner   string    `json:"owner"` // random, one per deploy
	Host    string    `json:"host"`
	PID     int       `json:"pid"`
	State   string    `json:"state"` // the state folder the deploy ran from
	Started time.Time `json:"started"`
}

// String says who the holder is, for messages: a holder read from a
// lock that holds no record (one taken by another program, or by a
// deploy in the moment before it records itself) has no process.
func (h Holder) String() string {
	if h.PID == 0 {
		return "a process that did not record who it is (another program, or an rsgen deploy that has just started)"
	}
	return fmt.Sprintf("process %d on %s (state %s), started %s", h.PID, h.Host, h.State, h.Started.UTC().Format(time.RFC3339))
}

// Lease is a held deploy lock.
type Lease interface {
	// Lost is closed when the lock is lost: renewing it failed, or
	// another deploy took it over. Err then says why.
	Lost() <-chan struct{}
	Err() error
	// Previous is the holder of the lock this lease took over, if any.
	Previous() *Holder
	// Release gives the lock up.
	Release(ctx context.Context) error
}

// LockedError is returned when another deploy holds the store's lock.
type LockedError struct {
	Store  string
	Holder Holder
	// Renewed is when the holder last renewed the lock (the store's
	// clock), zero when the store's lock needs no renewal.
	Renewed time.Time
	// Expires says how long the lock stays valid without renewal.
	Expires time.Duration
}

func (e *LockedError) Error() string {
	msg := fmt.Sprintf("another deploy to %s is running: the lock is held by %s", e.Store, e.Holder)
	if !e.Renewed.IsZero() {
		msg += fmt.Sprintf(", renewed %s; it expires %s after its last renewal, or take it over with --break-lock once that deploy is known to be gone",
			e.Renewed.UTC().Format(time.RFC3339), e.Expires)
	}
	return msg
}

// Requests counts the requests a store made, by kind, as a provider bills
// them.
type Requests struct {
	Put    int // PUT of an object, the manifest, the lock, or a part
	Copy   int // server-side copies (headers re-applied)
	Get    int
	Head   int
	Delete int // DELETE of one object, or POST of a batch of deletes
	Other  int // multipart starts and completions
	// BytesSent counts the bodies sent.
	BytesSent int64
}

// Total is the number of requests.
func (r Requests) Total() int { return r.Put + r.Copy + r.Get + r.Head + r.Delete + r.Other }

// sub returns the requests made since earlier.
func (r Requests) sub(earlier Requests) Requests {
	return Requests{Put: r.Put - earlier.Put, Copy: r.Copy - earlier.Copy, Get: r.Get - earlier.Get,
		Head: r.Head - earlier.Head, Delete: r.Delete - earlier.Delete, Other: r.Other - earlier.Other,
		BytesSent: r.BytesSent - earlier.BytesSent}
}
