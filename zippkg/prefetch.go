package zippkg

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"golang.org/x/sync/errgroup"
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

// prefetcher compresses the small bitstreams of a manifest, at most
// Options.Workers at once, and hands them over in manifest order through
// next.
type prefetcher struct {
	out   chan chan *compressed // per bitstream in order: where it will be, nil when left to the writer
	free  chan []byte           // buffers the writer is done with, for the next ones
	tools chan *tools           // the tools of the bitstreams compressed, for the next ones
	stop  context.CancelFunc
	jobs  errgroup.Group // the bitstreams being compressed
	done  errgroup.Group // dispatch, which waits for jobs
}

// tools are what compressing one bitstream takes: a compressor, a
// verifier and a read buffer, made once per bitstream compressed at the
// same time and reused.
type tools struct {
	comp *compressor
	err  error // the compressor could not be made
	v    verifier
	buf  []byte
}

// prefetch starts compressing the bitstreams of m, opened with open.
func prefetch(ctx context.Context, m *Manifest, opts *Options, open func(e *Entry) (io.ReadCloser, error)) *prefetcher {
	ctx, stop := context.WithCancel(ctx)
	workers := opts.workers()
	p := &prefetcher{out: make(chan chan *compressed, prefetchAhead), free: make(chan []byte, prefetchAhead+workers),
		tools: make(chan *tools, workers), stop: stop}
	p.jobs.SetLimit(workers)
	p.done.Go(func() error {
		defer close(p.out)
		p.dispatch(ctx, m, opts, open)
		return p.jobs.Wait()
	})
	return p
}

// dispatch compresses the small bitstreams of m, and hands their places,
// in order, to the writer.
func (p *prefetcher) dispatch(ctx context.Context, m *Manifest, opts *Options, open func(e *Entry) (io.ReadCloser, error)) {
	for i := range m.Entries {
		e := &m.Entries[i]
		if !e.hasBitstream() {
			continue
		}
		var result chan *compressed
		if e.Length <= prefetchMax {
			result = make(chan *compressed, 1)
			method := opts.method(e.Type)
			p.jobs.Go(func() error {
				t := p.takeTools(opts)
				defer func() { p.tools <- t }()
				if t.err != nil {
					result <- &compressed{err: t.err}
				} else {
					result <- compressAhead(ctx, e, method, t.comp, &t.v, t.buf, p.buffer(), open)
				}
				return nil
			})
		}
		select {
		case p.out <- result:
		case <-ctx.Done():
			return
		}
	}
}

// takeTools returns the tools a bitstream that ended left, or new ones.
func (p *prefetcher) takeTools(opts *Options) *tools {
	select {
	case t := <-p.tools:
		return t
	default:
		comp, err := newCompressor(opts.level())
		return &tools{comp: comp, err: err, buf: make([]byte, 64<<10)}
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

// close stops the compressing and waits for it, so that every file it
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
