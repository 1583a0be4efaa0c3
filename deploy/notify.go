package deploy

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/rsgen/rsgen/notify"
	"github.com/rsgen/rsgen/snapshot"
)

// Notifications
//
// The builds write their notifications into the outbox of the state
// folder (package notify); a deploy sends them to the hub once what they
// name is live, after its last step, and `rsgen notify` does for a site
// that something else publishes (a workflow's deploy step). A
// notification leaves the outbox only when the hub took it (2xx), so a
// deploy killed or cut off from the hub at any point leaves the rest for
// the next, which sends them byte for byte as they were.

// ErrNoState is returned by SendNotifications for a state folder that
// holds no build.
var ErrNoState = errors.New("no build: the state folder holds no state (run rsgen build first)")

// SendNotifications sends the notifications pending in the outbox of the
// state folder to s's hub, oldest first, under the state's lock (waiting,
// as waiting is told, for a build that holds it). It sends only those of
// builds whose state was saved: those ending by the last saved build's
// time, and by s.Until when set (a deploy's build, Summary.Built). A
// build killed before it saved its state may not have published what its
// notification names; the build after it decides. It returns how many
// were sent, and a *notify.SendError when the hub did not take one.
func SendNotifications(ctx context.Context, state string, s notify.Sender, waiting func(msg string)) (int, error) {
	if _, err := os.Stat(filepath.Join(state, snapshot.FileName)); errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("%s: %w", state, ErrNoState)
	}
	lock, err := snapshot.AcquireLock(ctx, state, true, waiting)
	if err != nil {
		return 0, err
	}
	defer lock.Release()
	st, err := snapshot.Load(state)
	if err != nil {
		return 0, err
	}
	last := time.Unix(st.LastBuild, 0).UTC()
	st.Close()
	if s.Until.IsZero() || s.Until.After(last) {
		s.Until = last
	}
	return s.Send(ctx, notify.OpenOutbox(filepath.Join(state, snapshot.OutboxDir)))
}
