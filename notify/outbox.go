package notify

import (
	"bufio"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
)

// ErrNotConsecutive is returned by Outbox.Begin when a batch does not
// start where the channel's last notification ended.
var ErrNotConsecutive = errors.New("notifications of a channel must cover consecutive intervals")

// Outbox is the folder of payloads not yet taken by the hub (see the
// package comment). Its methods are not safe for concurrent use, nor for
// two processes at once: the state lock keeps builds and deploys apart.
type Outbox struct {
	dir    string
	limits [2]int64 // entries and bytes of one payload
}

// OpenOutbox returns the outbox in dir, which is created with the first
// batch.
func OpenOutbox(dir string) *Outbox {
	return &Outbox{dir: dir, limits: [2]int64{rs.MaxEntries, rs.MaxBytes}}
}

// Pending is a payload in the outbox.
type Pending struct {
	Topic       string
	Seq         uint64 // its place in the channel, from 1
	From, Until time.Time
	Path        string // the file holding its bytes
}

// channelRecord is what the outbox keeps of a channel beyond its
// payloads: renaming it into place commits a batch.
type channelRecord struct {
	Topic      string
	Capability string
	Seq        uint64    // of the last payload committed
	Until      time.Time // of the last payload committed
}

const (
	recordName  = "channel"
	recordMagic = "rsgen-outbox-channel 1"
)

// channelDir returns the folder of topic's channel: named by a digest of
// the topic, which may hold any character.
func (o *Outbox) channelDir(topic string) string {
	sum := sha256.Sum256([]byte(topic))
	return filepath.Join(o.dir, hex.EncodeToString(sum[:16]))
}

// Last returns the until of the last notification committed to topic's
// channel, sent or not, and false when the channel has none: the from of
// the channel's next batch.
func (o *Outbox) Last(topic string) (time.Time, bool, error) {
	rec, err := readRecord(o.channelDir(topic))
	if err != nil || rec == nil {
		return time.Time{}, false, err
	}
	return rec.Until, true, nil
}

// Begin starts a batch of payloads for topic covering [h.From, h.Until].
// When the channel has notifications, h.From must be the until of the
// last one (ErrNotConsecutive).
func (o *Outbox) Begin(topic string, h Head) (*Batch, error) {
	if err := checkTopic(topic); err != nil {
		return nil, fmt.Errorf("notify: %w", err)
	}
	if err := h.check(); err != nil {
		return nil, fmt.Errorf("notify: batch for %s: %w", topic, err)
	}
	dir := o.channelDir(topic)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("notify: outbox: %w", err)
	}
	rec, err := readRecord(dir)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		rec = &channelRecord{Topic: topic, Capability: h.Capability}
	}
	switch {
	case rec.Topic != topic:
		return nil, fmt.Errorf("notify: outbox %s holds the channel %s, not %s", dir, rec.Topic, topic)
	case rec.Capability != h.Capability:
		return nil, fmt.Errorf("notify: channel %s is a %s channel, not %s", topic, rec.Capability, h.Capability)
	case rec.Seq > 0 && !h.From.Equal(rec.Until) && !(h.AfterGap && h.From.After(rec.Until)):
		return nil, fmt.Errorf("notify: batch for %s from %s: %w (the last ended at %s)", topic, fmtTime(h.From), ErrNotConsecutive, fmtTime(rec.Until))
	}
	if err := removeDebris(dir, rec.Seq); err != nil {
		return nil, err
	}
	return &Batch{o: o, dir: dir, rec: *rec, head: h}, nil
}

// Batch writes the payloads of one interval of one channel. Add the
// entries in forward chronological order, then Commit, or Abort.
type Batch struct {
	o    *Outbox
	dir  string
	rec  channelRecord // as it was at Begin
	head Head
	cur  *part
	done []string  // the temporary files of the finished parts
	last time.Time // datetime of the last entry added
}

// Add adds an entry: for a Change Notification, a change of a resource
// (rs:md change, datetime and, but for deletions, hash, length and type);
// for a Framework Notification, a change of a capability document (rs:md
// change, datetime and capability; an rs:ln rel="index" names the index
// of a component). A payload that is full is closed, and the next one
// starts at the entry's datetime.
func (b *Batch) Add(e *rs.Entry) error {
	if err := checkEntry(b.head.Capability, e, b.head.From, b.head.Until, b.last, true); err != nil {
		return fmt.Errorf("notify: entry %s: %w", e.Loc, err)
	}
	if b.cur == nil {
		if err := b.startPart(b.head.From); err != nil {
			return err
		}
	}
	err := b.cur.w.Entry(e)
	if errors.Is(err, rs.ErrDocumentFull) && b.cur.w.Entries() > 0 {
		if err = b.finishPart(e.MD.Datetime); err == nil {
			err = b.startPart(e.MD.Datetime)
		}
		if err == nil {
			err = b.cur.w.Entry(e)
		}
	}
	if err != nil {
		return fmt.Errorf("notify: entry %s: %w", e.Loc, err)
	}
	b.last = e.MD.Datetime
	return nil
}

func (b *Batch) startPart(from time.Time) error {
	p, err := startPart(func() (*os.File, error) {
		return os.CreateTemp(b.dir, layout.TempPrefix+"payload-*")
	}, &b.head, from, b.o.limits)
	if err != nil {
		return fmt.Errorf("notify: outbox %s: %w", b.dir, err)
	}
	b.cur = p
	return nil
}

func (b *Batch) finishPart(until time.Time) error {
	p := b.cur
	b.cur = nil
	if err := p.finish(until, b.head.Until); err != nil {
		os.Remove(p.f.Name())
		return fmt.Errorf("notify: write %s: %w", p.f.Name(), err)
	}
	b.done = append(b.done, p.f.Name())
	return nil
}

// Finish ends the batch's payloads, which Commit then puts into the
// outbox, and returns the file of the newest: its bytes are final, so
// that a build can publish them at the topic URI before the commit. It
// returns "" for a batch without entries. No entry may be added after.
func (b *Batch) Finish() (string, error) {
	if b.cur != nil {
		if err := b.finishPart(b.head.Until); err != nil {
			b.Abort()
			return "", err
		}
	}
	if len(b.done) == 0 {
		return "", nil
	}
	return b.done[len(b.done)-1], nil
}

// Commit puts the batch's payloads into the outbox and returns them. A
// batch without entries puts none: the channel's next batch still starts
// where the last notification ended.
func (b *Batch) Commit() ([]Pending, error) {
	if _, err := b.Finish(); err != nil {
		return nil, err
	}
	if len(b.done) == 0 {
		b.Abort()
		return nil, nil
	}
	// The payloads are renamed to their sequence numbers first; until the
	// record says they are committed, a reader ignores them and the next
	// batch removes them.
	var out []Pending
	rec := b.rec
	for _, tmp := range b.done {
		rec.Seq++
		path := filepath.Join(b.dir, seqName(rec.Seq))
		if err := os.Rename(tmp, path); err != nil {
			b.Abort()
			return nil, fmt.Errorf("notify: commit %s: %w", path, err)
		}
		out = append(out, Pending{Topic: rec.Topic, Seq: rec.Seq, Path: path})
	}
	b.done = nil
	if err := syncDir(b.dir); err != nil { // the payloads are on disk before the record says so
		return nil, fmt.Errorf("notify: commit %s: %w", b.dir, err)
	}
	rec.Until = b.head.Until
	if err := writeRecord(b.dir, &rec); err != nil {
		return nil, err
	}
	for i := range out {
		if err := readInterval(&out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Abort drops the batch: nothing of it reaches the outbox.
func (b *Batch) Abort() {
	if b.cur != nil {
		b.cur.discard()
		os.Remove(b.cur.f.Name())
		b.cur = nil
	}
	for _, tmp := range b.done {
		os.Remove(tmp)
	}
	b.done = nil
}

// Pending returns the payloads in the outbox: the channels in the order of
// their topics, and each channel's payloads in order.
func (o *Outbox) Pending() ([]Pending, error) {
	entries, err := os.ReadDir(o.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("notify: outbox: %w", err)
	}
	var out []Pending
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		ps, err := channelPending(filepath.Join(o.dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, ps...)
	}
	slices.SortStableFunc(out, func(a, b Pending) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return cmp.Compare(a.Seq, b.Seq)
	})
	return out, nil
}

// channelPending returns the committed payloads of the channel in dir, in
// order.
func channelPending(dir string) ([]Pending, error) {
	rec, err := readRecord(dir)
	if err != nil || rec == nil {
		return nil, err
	}
	seqs, err := payloadSeqs(dir)
	if err != nil {
		return nil, err
	}
	var out []Pending
	for _, seq := range seqs {
		if seq > rec.Seq {
			continue // of a batch that was never committed
		}
		p := Pending{Topic: rec.Topic, Seq: seq, Path: filepath.Join(dir, seqName(seq))}
		if err := readInterval(&p); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// Remove removes a payload the hub has taken.
func (o *Outbox) Remove(p Pending) error {
	if err := os.Remove(p.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("notify: outbox: %w", err)
	}
	if err := syncDir(filepath.Dir(p.Path)); err != nil {
		return fmt.Errorf("notify: outbox: %w", err)
	}
	return nil
}

func seqName(seq uint64) string { return fmt.Sprintf("%020d.xml", seq) }

// payloadSeqs returns the sequence numbers of the payload files in dir,
// in order.
func payloadSeqs(dir string) ([]uint64, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("notify: outbox: %w", err)
	}
	var seqs []uint64
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".xml")
		if !ok || len(name) != 20 {
			continue
		}
		if seq, err := strconv.ParseUint(name, 10, 64); err == nil {
			seqs = append(seqs, seq)
		}
	}
	slices.Sort(seqs)
	return seqs, nil
}

// removeDebris removes what a batch killed before its commit left in a
// channel's folder: temporary files, and payloads past the committed
// sequence number.
func removeDebris(dir string, committed uint64) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("notify: outbox: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		seq, err := strconv.ParseUint(strings.TrimSuffix(name, ".xml"), 10, 64)
		if strings.HasPrefix(name, layout.TempPrefix) || (err == nil && seq > committed) {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				return fmt.Errorf("notify: outbox: %w", err)
			}
		}
	}
	return nil
}

// readInterval reads the from and until of p's payload.
func readInterval(p *Pending) error {
	f, err := os.Open(p.Path)
	if err != nil {
		return fmt.Errorf("notify: outbox: %w", err)
	}
	defer f.Close()
	h, err := rs.NewReader(f).Head()
	if err != nil {
		return fmt.Errorf("notify: outbox: read %s: %w", p.Path, err)
	}
	p.From, p.Until = h.MD.From, h.MD.Until
	return nil
}

// readRecord reads the channel record in dir, or returns nil when there
// is none.
func readRecord(dir string) (*channelRecord, error) {
	path := filepath.Join(dir, recordName)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("notify: outbox: %w", err)
	}
	rec, err := parseRecord(string(data))
	if err != nil {
		return nil, fmt.Errorf("notify: outbox: read %s: %w", path, err)
	}
	return rec, nil
}

func parseRecord(s string) (*channelRecord, error) {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	if len(lines) != 5 || lines[0] != recordMagic {
		return nil, errors.New("not a channel record of this version")
	}
	var rec channelRecord
	var err error
	for i, key := range []string{"topic", "capability", "seq", "until"} {
		value, ok := strings.CutPrefix(lines[i+1], key+" ")
		if !ok {
			return nil, fmt.Errorf("line %d is not %q", i+2, key)
		}
		switch key {
		case "topic":
			rec.Topic = value
		case "capability":
			rec.Capability = value
		case "seq":
			rec.Seq, err = strconv.ParseUint(value, 10, 64)
		case "until":
			rec.Until, err = time.Parse(time.RFC3339, value)
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+2, err)
		}
	}
	return &rec, nil
}

// writeRecord writes the channel record in dir atomically: a temporary
// file, fsync, rename, and fsync of the folder.
func writeRecord(dir string, rec *channelRecord) error {
	path := filepath.Join(dir, recordName)
	tmp, err := os.CreateTemp(dir, layout.TempPrefix+recordName+"-*")
	if err != nil {
		return fmt.Errorf("notify: write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriter(tmp)
	fmt.Fprintf(w, "%s\ntopic %s\ncapability %s\nseq %d\nuntil %s\n", recordMagic, rec.Topic, rec.Capability, rec.Seq, fmtTime(rec.Until))
	err = w.Flush()
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		return fmt.Errorf("notify: write %s: %w", path, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
