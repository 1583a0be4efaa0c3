package zippkg

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
)

// Write compresses the small bitstreams of a package ahead of the writer,
// on a worker per core (Options.Workers), so that reading, hashing and deflating them uses
// every core while the writer writes them in order: a package is one
// stream, and a site that fits in one package (the default size is 1 GiB)
// would otherwise deflate on one core. A bitstream up to prefetchMax
// bytes is read, verified and compressed into memory, at most
// prefetchAhead of them waiting for the writer; a larger one is left to
// the writer, which streams it as before.
const (
	prefetchMax   = 256 << 10
	prefetchAhead = 8
)

// compressed is a bitstream read, verified and compressed ahead: its
// stored bytes, method, CRC-32 and length, or the error that stopped it.
type compressed struct {
	data   []byte
	method uint16
	crc    uint32
	size   int64
	err    error
}

// prefetcher compresses the small bitstreams of a manifest on its workers
// and hands them over in manifest order through next.
type prefetcher struct {
	out  chan chan *compressed // per bitstream in order: where it will be, nil when left to the writer
	free chan []byte           // buffers the writer is done with, for the next ones
	stop context.CancelFunc
	done sync.WaitGroup
}

// job is a bitstream for a worker, and where to put it.
type job struct {
	e      *Entry
	method uint16
	result chan *compressed
}

// prefetch starts compressing the bitstreams of m, opened with open.
func prefetch(ctx context.Context, m *Manifest, opts *Options, open func(e *Entry) (io.ReadCloser, error)) *prefetcher {
	ctx, stop := context.WithCancel(ctx)
	workers := opts.workers()
	p := &prefetcher{out: make(chan chan *compressed, prefetchAhead), free: make(chan []byte, prefetchAhead+workers), stop: stop}
	jobs := make(chan job)
	for range workers {
		p.done.Add(1)
		go func() {
			defer p.done.Done()
			p.work(ctx, opts, jobs, open)
		}()
	}
	p.done.Add(1)
	go func() {
		defer p.done.Done()
		defer close(p.out)
		defer close(jobs)
		p.dispatch(ctx, m, opts, jobs)
	}()
	return p
}

// dispatch hands the small bitstreams of m to the workers, and their
// places, in order, to the writer.
func (p *prefetcher) dispatch(ctx context.Context, m *Manifest, opts *Options, jobs chan<- job) {
	for i := range m.Entries {
		e := &m.Entries[i]
		if !e.hasBitstream() {
			continue
		}
		var result chan *compressed
		if e.Length <= prefetchMax {
			result = make(chan *compressed, 1)
			select {
			case jobs <- job{e, opts.method(e.Type), result}:
			case <-ctx.Done():
				return
			}
		}
		select {
		case p.out <- result:
		case <-ctx.Done():
			return
		}
	}
}

// work compresses the bitstreams of jobs, with a compressor, a verifier and
// a read buffer of its own.
func (p *prefetcher) work(ctx context.Context, opts *Options, jobs <-chan job, open func(e *Entry) (io.ReadCloser, error)) {
	comp, err := newCompressor(opts.level())
	buf := make([]byte, 64<<10)
	var v verifier
	for j := range jobs {
		if err != nil {
			j.result <- &compressed{err: err}
			continue
		}
		j.result <- compressAhead(ctx, j.e, j.method, comp, &v, buf, p.buffer(), open)
	}
}

// next returns the next bitstream compressed ahead, or nil when the writer
// is to stream it. A worker has it, or has done it, when next returns.
func (p *prefetcher) next() *compressed {
	if result := <-p.out; result != nil {
		return <-result
	}
	return nil
}

// recycle hands back the bytes of a bitstream the writer has written.
func (p *prefetcher) recycle(data []byte) {
	select {
	case p.free <- data[:0]:
	default:
	}
}

// buffer returns a buffer the writer is done with, or nil.
func (p *prefetcher) buffer() []byte {
	select {
	case b := <-p.free:
		return b
	default:
		return nil
	}
}

// close stops the workers and waits for them, so that every file they
// opened is closed.
func (p *prefetcher) close() {
	p.stop()
	p.done.Wait()
}

// compressAhead reads the bitstream of e through the verifier and the
// compressor into memory, as Writer.Add would stream it, with the errors
// Add and Write would return. It compresses into reuse, when it has room.
func compressAhead(ctx context.Context, e *Entry, method uint16, comp *compressor, v *verifier, buf, reuse []byte, open func(e *Entry) (io.ReadCloser, error)) *compressed {
	c := &compressed{method: method}
	r, err := open(e)
	if err != nil {
		c.err = fmt.Errorf("zippkg: open %s: %w", e.Path, err)
		return c
	}
	want, err := wanted(e, !isVouched(r))
	if err != nil {
		r.Close()
		c.err = fmt.Errorf("zippkg: add %s: %w", e.Path, err)
		return c
	}
	data := bytes.NewBuffer(reuse)
	data.Grow(int(e.Length) + 64)
	c.err = readAhead(ctx, e, r, data, comp, v, want, method, buf)
	if cerr := r.Close(); c.err == nil && cerr != nil {
		c.err = fmt.Errorf("zippkg: close %s: %w", e.Path, cerr)
	}
	if c.err == nil {
		c.crc, _, c.size, c.err = comp.finish()
		c.data = data.Bytes()
	}
	return c
}

func readAhead(ctx context.Context, e *Entry, r io.Reader, dst io.Writer, comp *compressor, v *verifier, want []digest, method uint16, buf []byte) error {
	if err := comp.reset(dst, method); err != nil {
		return fmt.Errorf("zippkg: add %s: %w", e.Path, err)
	}
	v.reset(want)
	if _, err := io.CopyBuffer(teeWriter{v, comp}, io.LimitReader(ctxReader{ctx, r}, e.Length+1), buf); err != nil {
		return fmt.Errorf("zippkg: add %s: %w", e.Path, err)
	}
	return v.check(e)
}

// addCompressed adds the next bitstream of the manifest, which must be at
// path, from its bytes compressed ahead: the same bytes Add writes.
func (w *Writer) addCompressed(path string, c *compressed) error {
	e, err := w.take(path)
	if err != nil {
		return err
	}
	if c.err != nil {
		return w.fail(c.err)
	}
	fh := newHeader(e.Path[1:], c.method, w.entryTime(e))
	raw, err := w.zw.CreateRaw(fh)
	if err == nil {
		_, err = raw.Write(c.data)
	}
	if err != nil {
		return w.fail(fmt.Errorf("zippkg: add %s: %w", path, err))
	}
	setSizes(fh, c.crc, int64(len(c.data)), c.size)
	return nil
}
