package destination

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"github.com/rsgen/rsgen/notify"
	"github.com/rsgen/rsgen/rs"
)

// ListenOptions configure Listen: those of a sync, and where the hub
// reaches the Destination.
type ListenOptions struct {
	Options
	// Addr is the address (host:port) the callbacks are served on;
	// Listener, when set, is served instead.
	Addr     string
	Listener net.Listener
	// Callback is the URL under which the hub reaches Addr: needed behind
	// a proxy or NAT; "" is http://ADDR/.
	Callback string
	// Lease is the lease asked of the hub (the hub's default when zero).
	Lease time.Duration
	// Subscribed, when set, is told the callback URL once the hub has
	// verified the subscription.
	Subscribed func(callback string)
	// Done, when set, is told of each run: the first sync, each
	// notification applied (Mode "notification"), each pull from the
	// Change Lists a gap called for.
	Done func(*Summary)
}

// ErrNoChannel is returned by Listen when the set's Capability List
// advertises no Change Notification channel with a hub.
var ErrNoChannel = errors.New("the Capability List advertises no Change Notification channel with a hub")

// listener is a Listen in progress: the mirror's lock and one client for
// every run, so that the connections to the Source are kept.
type listener struct {
	o    ListenOptions
	c    *client
	src  *source // found by the first sync, with its mapper
	m    *mapper
	subs *notify.Subscriber
}

// Listen mirrors the set as Sync does, then subscribes to the set's
// Change Notification channel at its hub and applies each notification
// as it arrives, one at a time and in order, with the verification of a
// sync: the state then says what a sync would, and a later Sync goes on
// from it. A gap in the notifications, or one that cannot be applied, is
// closed from the Change Lists. Listen holds the state's lock until ctx
// ends; then it unsubscribes and returns nil.
func Listen(ctx context.Context, o ListenOptions) error {
	var err error
	if o.Options, err = o.Options.resolve(); err != nil {
		return err
	}
	o.Notify = serialized(o.Notify) // the Subscriber reports from its own goroutines
	ln := o.Listener
	if ln == nil {
		if ln, err = net.Listen("tcp", o.Addr); err != nil {
			return &UsageError{Msg: fmt.Sprintf("listen on %s: %v", o.Addr, err)}
		}
	}
	defer ln.Close()
	if o.Callback == "" {
		if o.Callback, err = defaultCallback(ln.Addr()); err != nil {
			return err
		}
	}
	lock, err := lockState(ctx, o.State)
	if err != nil {
		return err
	}
	l := &listener{o: o, c: newClient(&o.Options)}
	err = l.listen(ctx, ln)
	lock.release(false)
	return err
}

// defaultCallback is the callback of a listener on addr: http://ADDR/,
// which only names a host a hub can reach when it is not unspecified.
func defaultCallback(addr net.Addr) (string, error) {
	tcp, ok := addr.(*net.TCPAddr)
	if ok && tcp.IP.IsUnspecified() {
		return "", &UsageError{Msg: fmt.Sprintf("%s names no host a hub can reach: give the callback URL the hub reaches it at", addr)}
	}
	return "http://" + addr.String() + "/", nil
}

// serialized returns a notify that is called by one goroutine at a time
// (one that does nothing for nil).
func serialized(notify func(Event)) func(Event) {
	if notify == nil {
		return func(Event) {}
	}
	var mu sync.Mutex
	return func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		notify(e)
	}
}

// listen syncs, subscribes and applies the deliveries until ctx ends.
func (l *listener) listen(ctx context.Context, ln net.Listener) error {
	s := l.syncer()
	err := s.run(ctx)
	s.close()
	l.done(s)
	if err != nil {
		return err
	}
	l.src, l.m = s.src, s.m
	topic, hub, err := l.channel()
	if err != nil {
		return err
	}
	deliveries, stopped := make(chan notify.Delivery, 16), make(chan struct{})
	l.subs = notify.NewSubscriber(notify.SubscriberOptions{
		Callback: l.o.Callback,
		// The hub waits while the queue is full; once Listen stops, a
		// delivery is dropped (the next sync reads the Change Lists).
		Deliver: func(d notify.Delivery) {
			select {
			case deliveries <- d:
			case <-stopped:
			}
		},
		Problem: func(topic string, err error) {
			l.o.Notify(Event{Kind: EventWarning, Msg: fmt.Sprintf("the notification channel %s: %v", topic, err)})
		},
		Lease: l.o.Lease,
	})
	srv := &http.Server{Handler: l.subs, ReadHeaderTimeout: l.o.Timeout}
	go srv.Serve(ln)
	defer srv.Close()
	subCtx, cancel := context.WithTimeout(ctx, l.o.Timeout)
	_, err = l.subs.Subscribe(subCtx, hub, topic, s.sum.SyncedUntil)
	cancel()
	if err != nil {
		l.unsubscribe()
		return err
	}
	if l.o.Subscribed != nil {
		l.o.Subscribed(l.o.Callback)
	}
	for {
		select {
		case d := <-deliveries:
			l.apply(ctx, d)
		case <-ctx.Done():
			// The hub verifies the unsubscription through the server,
			// which runs until then.
			close(stopped)
			l.unsubscribe()
			return nil
		}
	}
}

// unsubscribeTimeout bounds the wait for the hub to verify an
// unsubscription when Listen ends.
const unsubscribeTimeout = 5 * time.Second

func (l *listener) unsubscribe() {
	ctx, cancel := context.WithTimeout(context.Background(), unsubscribeTimeout)
	defer cancel()
	if err := l.subs.Close(ctx); err != nil {
		l.o.Notify(Event{Kind: EventWarning, Msg: err.Error()})
	}
}

// channel returns the topic and hub of the set's Change Notification
// channel.
func (l *listener) channel() (topic, hub string, err error) {
	for _, t := range l.src.caps[rs.CapChangeNotification] {
		if h := l.src.hubs[t]; h != "" {
			return t, h, nil
		}
	}
	return "", "", fmt.Errorf("%w: %s (the Source sends no notifications; run rsgen sync now and then instead)", ErrNoChannel, l.src.capList)
}

// syncer returns a syncer of one run, on the listener's client, with
// the set the first sync found.
func (l *listener) syncer() *syncer {
	s := newSyncer(l.o.Options, l.c)
	s.src, s.m = l.src, l.m
	if l.src != nil {
		s.sum.Set, s.sum.CapabilityList = l.src.set, l.src.capList
	}
	return s
}

// done reports a run, with the requests it made.
func (l *listener) done(s *syncer) {
	s.countRequests()
	s.sum.Took = time.Since(s.start)
	if l.o.Done != nil {
		l.o.Done(s.sum)
	}
}

// apply applies a delivery: its notification, or, after a gap or when
// that fails, the Change Lists.
func (l *listener) apply(ctx context.Context, d notify.Delivery) {
	s := l.syncer()
	s.sum.Notification = notify.Interval{From: d.From, Until: d.Until}
	err := s.notified(ctx, d)
	s.close()
	if err == nil {
		l.done(s)
		return
	}
	if ctx.Err() != nil {
		return
	}
	if !errors.Is(err, errGapBefore) {
		l.o.Notify(Event{Kind: EventWarning, Msg: fmt.Sprintf("notification %s: %v; reading the Change Lists instead", intervalString(d.From, d.Until), err)})
	}
	s = l.syncer()
	s.sum.Notification = notify.Interval{From: d.From, Until: d.Until}
	err = s.run(ctx)
	s.close()
	l.done(s)
	if err != nil && ctx.Err() == nil {
		l.o.Notify(Event{Kind: EventWarning, Msg: fmt.Sprintf("read the Change Lists after notification %s: %v; the next notification tries again", intervalString(d.From, d.Until), err)})
	}
}

// errGapBefore: the notification does not start where the mirror's
// changes end.
var errGapBefore = errors.New("a gap before the notification")

// notified applies the change events of a notification, as a sync
// applies those of a Change List: when the mirror holds every change up
// to where the notification starts, it then holds them up to its until.
func (s *syncer) notified(ctx context.Context, d notify.Delivery) error {
	if err := s.openState(); err != nil {
		return err
	}
	st, err := loadState(s.o.State)
	if err != nil {
		return err
	}
	if d.Gap != nil || st.SyncedUntil.Before(d.From) {
		return errGapBefore // a pull failed, or notifications went missing
	}
	if err := s.openDir(); err != nil {
		return err
	}
	s.sum.Mode = "notification"
	s.lists = newReader(s.docs, s.src, s.m, s.rep, s.sum, s.work)
	wants := newSorter(s.work, wantCodec)
	defer wants.Close()
	if err := s.lists.notification(d, wants); err != nil {
		return err
	}
	all := sortedWants(wants)
	n, err := s.applier.count(all(), false)
	if err != nil {
		return err
	}
	s.rep.event(Event{Kind: EventPlanned, Files: n.fetch, Bytes: n.bytes})
	if err := s.applier.apply(ctx, all, false, n); err != nil {
		return err
	}
	return s.commit(st, later(st.SyncedUntil, d.Until))
}

// notification reads the change events of the delivery d, as those of a
// Change List, into wants.
func (rd *reader) notification(d notify.Delivery, wants *sorter[want]) error {
	last := d.From
	for i := range d.Entries {
		e := &d.Entries[i]
		at := changeTime(e, last)
		last = at
		if w, ok := rd.wantOf(e, e.MD.Change, at); ok {
			if err := wants.Add(w); err != nil {
				return err
			}
		}
	}
	return nil
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// intervalString writes a notification's interval.
func intervalString(from, until time.Time) string {
	return from.UTC().Format(time.RFC3339Nano) + "→" + until.UTC().Format(time.RFC3339Nano)
}

// resolve fills the defaults of o and makes Dir absolute.
func (o Options) resolve() (Options, error) {
	o = o.Defaults()
	abs, err := filepath.Abs(o.Dir)
	if err != nil {
		return o, err
	}
	o.Dir = abs
	return o, nil
}
