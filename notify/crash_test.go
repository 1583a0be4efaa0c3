package notify_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rsgen/rsgen/notify"
	"github.com/rsgen/rsgen/rs"
)

// TestOutboxSurvivesKill kills, with SIGKILL at random moments, a process
// that commits batch after batch into an outbox, and sends some of them
// (removing what it sent). After every kill the outbox must be whole: the
// payloads pending are those committed and not removed, with consecutive
// intervals and sequence numbers, each still byte for byte what it was
// when first seen, and the next batch starts where the last committed one
// ended.
func TestOutboxSurvivesKill(t *testing.T) {
	if os.Getenv("RSGEN_NOTIFY_CRASH_CHILD") != "" {
		t.Skip("the child runs in TestOutboxCrashChild")
	}
	rounds := 12
	if os.Getenv("RSGEN_STRESS") == "1" {
		rounds = 200
	}
	dir := t.TempDir()
	seen := map[uint64][32]byte{} // payload seq -> digest, when first seen
	lastSeq := uint64(0)          // the highest seq ever seen pending
	for round := range rounds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestOutboxCrashChild$")
		cmd.Env = append(os.Environ(), "RSGEN_NOTIFY_CRASH_CHILD="+dir)
		out := killWhileCommitting(t, cmd)
		if bytes.Contains(out, []byte("FAIL")) {
			t.Fatalf("round %d: the child failed:\n%s", round, out)
		}
		lastSeq = checkOutbox(t, notify.OpenOutbox(dir), seen, lastSeq)
	}
	if lastSeq < 2 {
		t.Errorf("the child committed %d payloads in %d rounds; the kills tested nothing", lastSeq, rounds)
	}
}

// childCommitted is the line the child prints after each batch it
// commits.
const childCommitted = "outbox child: committed"

// killWhileCommitting starts cmd, lets it commit a random number of
// batches (none to three), kills it with SIGKILL at a random moment of
// the next 20 ms, and returns what it printed. The moment counts from the
// child's own word on its progress: on a busy machine a process's start
// alone can outlast any fixed delay, and the kills would test nothing.
func killWhileCommitting(t *testing.T, cmd *exec.Cmd) []byte {
	t.Helper()
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	r := bufio.NewReader(pipe)
	for batches := rand.IntN(4); batches > 0; {
		line, err := r.ReadString('\n')
		out.WriteString(line)
		if strings.HasPrefix(line, childCommitted) {
			batches--
		}
		if err != nil { // the child ended on its own: its output says why
			cmd.Wait()
			return out.Bytes()
		}
	}
	copied := make(chan struct{})
	go func() {
		io.Copy(&out, r)
		close(copied)
	}()
	time.Sleep(time.Duration(rand.IntN(20)) * time.Millisecond) // where to kill, not a timing assertion
	cmd.Process.Signal(syscall.SIGKILL)
	<-copied
	cmd.Wait()
	return out.Bytes()
}

// checkOutbox checks the outbox after a kill and returns the highest seq
// pending.
func checkOutbox(t *testing.T, o *notify.Outbox, seen map[uint64][32]byte, lastSeq uint64) uint64 {
	t.Helper()
	ps, err := o.Pending()
	if err != nil {
		t.Fatal(err)
	}
	last, ok, err := o.Last(changeTopic)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range ps {
		data, err := os.ReadFile(p.Path)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		if prev, ok := seen[p.Seq]; ok && prev != sum {
			t.Fatalf("payload %d changed after a kill", p.Seq)
		}
		seen[p.Seq] = sum
		if _, err := notify.Parse(bytes.NewReader(data)); err != nil {
			t.Fatalf("payload %d: %v", p.Seq, err)
		}
		if i > 0 && (p.Seq != ps[i-1].Seq+1 || !p.From.Equal(ps[i-1].Until)) {
			t.Fatalf("payloads %d [%s, %s] and %d [%s, %s] are not consecutive",
				ps[i-1].Seq, ps[i-1].From, ps[i-1].Until, p.Seq, p.From, p.Until)
		}
	}
	if len(ps) > 0 {
		newest := ps[len(ps)-1]
		if newest.Seq < lastSeq {
			t.Fatalf("payload %d, pending before the kill, is lost", lastSeq)
		}
		if !ok || !last.Equal(newest.Until) {
			t.Fatalf("the channel's last until %s (%v) is not the newest payload's %s", last, ok, newest.Until)
		}
		lastSeq = newest.Seq
	}
	return lastSeq
}

// TestOutboxCrashChild is the process TestOutboxSurvivesKill kills: it
// commits batches of three payloads, each starting where the channel's
// last ended, and removes the oldest pending payload after every second
// batch, as a sender would, until it is killed.
func TestOutboxCrashChild(t *testing.T) {
	dir := os.Getenv("RSGEN_NOTIFY_CRASH_CHILD")
	if dir == "" {
		t.Skip("run by TestOutboxSurvivesKill")
	}
	o := notify.OpenOutbox(dir)
	o.SetLimits(2, rs.MaxBytes)
	for i := 0; ; i++ {
		from, ok, err := o.Last(changeTopic)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			from = t0
		}
		until := from.Add(time.Minute)
		b, err := o.Begin(changeTopic, notify.Head{Capability: rs.CapChangeNotification, From: from, Until: until})
		if err != nil {
			t.Fatal(err)
		}
		for j := range 5 {
			e := rs.Entry{Loc: "https://example.org/f" + strconv.Itoa(j), MD: rs.MD{Change: rs.ChangeUpdated, Datetime: from.Add(time.Duration(j+1) * time.Second)}}
			if err := b.Add(&e); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := b.Commit(); err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			ps, err := o.Pending()
			if err != nil {
				t.Fatal(err)
			}
			if err := o.Remove(ps[0]); err != nil {
				t.Fatal(fmt.Errorf("remove: %w", err))
			}
		}
		fmt.Println(childCommitted)
	}
}
