package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/deploy"
	"github.com/rsgen/rsgen/notify"
)

// exitNotificationsPending is the exit code of a deploy that published
// everything, or of rsgen notify, when the hub did not take every
// notification: they stay in the outbox for the next deploy or notify.
const exitNotificationsPending = 3

var notifyCommand = &command{
	name:     "notify",
	summary:  "send the notifications the builds wrote to the WebSub hub (rsgen deploy does it itself)",
	synopsis: "[flags]",
	about: `Sends the push notifications that the builds wrote into the outbox of the
state folder ([notification] in rsgen.toml) to the hub, oldest first: a
Change Notification of each build's changes per set, and a Framework
Notification of its capability documents when framework = true. rsgen
deploy sends them itself once the files they name are live; run rsgen
notify instead for a site that something else publishes, such as a GitHub
Pages workflow, after its deploy step.

Only the notifications of builds whose state was saved are sent (a build
that was killed may not have published what its notification names). A
notification leaves the outbox only when the hub answered 2xx; a failure is
tried again, 5 attempts in all, waiting 1s, 2s, 4s and 8s between them, then
it and those after it stay for the next run, byte for byte the same, so
that Destinations drop a duplicate. With ping = "websub" the hub is sent a publish ping per channel
and fetches the topic, which serves only the newest notification.`,
	more: `exit codes: 0 sent (or nothing to send), 1 failure, 2 usage or configuration
error (no hub in [notification]), 3 the hub did not take every notification
(they stay in the outbox for the next run), 130 interrupted.

examples:
  rsgen notify
  rsgen notify --config site/rsgen.toml --json`,
	flags: func() (*flag.FlagSet, any) { f := newNotifyFlags(); return f.fs, f },
	run:   runNotify,
}

// notifyFlags are the flags of rsgen notify.
type notifyFlags struct {
	fs            *flag.FlagSet
	site          siteFlags
	quiet, asJSON bool
}

func newNotifyFlags() *notifyFlags {
	f := &notifyFlags{fs: flag.NewFlagSet("notify", flag.ContinueOnError)}
	f.fs.StringVar(&f.site.config, "config", "", "the configuration `FILE` (default: ./rsgen.toml when there is one)")
	f.fs.StringVar(&f.site.state, "state", "", "the `DIR` of rsgen's state, whose outbox is sent (config: state)")
	f.fs.BoolVar(&f.quiet, "quiet", false, "print nothing but errors and warnings")
	f.fs.BoolVar(&f.asJSON, "json", false, "print a summary as one JSON object on stdout")
	return f
}

func runNotify(ctx context.Context, cio cliIO, values any, _ []string) int {
	f := values.(*notifyFlags)
	cfg, _, err := f.site.load()
	if err == nil && !cfg.Notification.On() {
		err = &config.Error{Msg: "no hub to notify: set hub in [notification] of rsgen.toml"}
	}
	if err != nil {
		fmt.Fprintf(cio.stderr, "rsgen notify: %v\n", err)
		return exitCodeOf(err)
	}
	res := sendNotifications(ctx, cio, cfg, time.Time{})
	if f.asJSON {
		if err := res.writeJSON(cio.stdout); err != nil {
			fmt.Fprintf(cio.stderr, "rsgen notify: %v\n", err)
			return exitFailure
		}
	} else if res.err == nil && !f.quiet {
		fmt.Fprintf(cio.stdout, "rsgen notify: %s: %s sent\n", res.Hub, plural(res.Sent, "notification"))
	}
	var se *notify.SendError
	switch {
	case res.err == nil:
		return exitOK
	case ctx.Err() != nil:
		fmt.Fprintln(cio.stderr, "rsgen notify: interrupted; the notifications not sent stay in the outbox for the next run")
		return exitInterrupted
	case errors.As(res.err, &se):
		fmt.Fprintf(cio.stderr, "rsgen notify: %s\n", strings.TrimPrefix(res.err.Error(), "notify: "))
		return exitNotificationsPending
	}
	fmt.Fprintf(cio.stderr, "rsgen notify: %v\n", res.err)
	return exitFailure
}

// notified is the outcome of sending the outbox, as deploy and notify
// report it.
type notified struct {
	Hub     string `json:"hub"`
	Sent    int    `json:"sent"`
	Pending int    `json:"pending"` // left in the outbox by a failure
	Error   string `json:"error,omitempty"`
	err     error
}

// sendNotifications sends the outbox of cfg's state folder to its hub:
// the notifications of the builds up to until (zero: every saved build),
// telling of each failed attempt and of a wait for a build on stderr.
func sendNotifications(ctx context.Context, cio cliIO, cfg *config.Config, until time.Time) *notified {
	res := &notified{Hub: cfg.Notification.Hub}
	s := notify.Sender{Hub: cfg.Notification.Hub, Ping: cfg.Notification.Ping, Until: until,
		Failed: func(p notify.Pending, attempt int, err error) {
			fmt.Fprintf(cio.stderr, "rsgen: warning: the hub %s did not take notification %d of %s (attempt %d): %v\n", cfg.Notification.Hub, p.Seq, p.Topic, attempt, err)
		}}
	res.Sent, res.err = deploy.SendNotifications(ctx, cfg.State, s, func(msg string) { fmt.Fprintf(cio.stderr, "rsgen: %s\n", msg) })
	var se *notify.SendError
	if errors.As(res.err, &se) {
		res.Pending = se.Left
	}
	if res.err != nil {
		res.Error = res.err.Error()
	}
	return res
}

// writeJSON prints the outcome as rsgen notify --json does.
func (n *notified) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		OK bool `json:"ok"`
		*notified
	}{n.err == nil, n})
}
