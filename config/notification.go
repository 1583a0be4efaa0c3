package config

import (
	"errors"
	"net/url"

	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/notify"
)

// Notification configures push notifications: the ResourceSync Change
// Notification and Framework Notification channels of each set, over a
// WebSub hub (package notify). Setting Hub switches them on.
type Notification struct {
	// Hub is the URL of the WebSub hub, advertised with every channel in
	// the Capability Lists; empty, there are no channels.
	Hub string `toml:"hub"`
	// Change gives each set a Change Notification channel: the changes
	// of its resources.
	Change bool `toml:"change"`
	// Framework gives each set a Framework Notification channel: the
	// changes of its capability documents.
	Framework bool `toml:"framework"`
	// Ping is how notifications reach the hub: "resourcesync" POSTs each
	// payload, as the specifications do; "websub" sends a WebSub publish
	// ping, for hubs that fetch the topic themselves.
	Ping notify.Ping `toml:"ping"`
}

// notificationKeys are the keys of [notification], for suggestions.
var notificationKeys = []string{"hub", "change", "framework", "ping"}

// On reports whether notifications are configured.
func (n *Notification) On() bool { return n.Hub != "" }

// WantsChangeNotification reports whether the set has a Change
// Notification channel: [notification] change, or the set's own
// change_notification, when a hub is configured.
func (s *Set) WantsChangeNotification(n *Notification) bool {
	return n.On() && orDefault(s.ChangeNotification, n.Change)
}

// WantsFrameworkNotification reports whether the set has a Framework
// Notification channel.
func (s *Set) WantsFrameworkNotification(n *Notification) bool {
	return n.On() && orDefault(s.FrameworkNotification, n.Framework)
}

func orDefault(override *bool, def bool) bool {
	if override != nil {
		return *override
	}
	return def
}

// checkNotification checks [notification] and the sets' overrides of it:
// a set cannot ask for a channel without a hub.
func (c *Config) checkNotification() error {
	n := &c.Notification
	if n.Ping != "" { // "" is the default, as for a Sender
		if err := n.Ping.UnmarshalText([]byte(n.Ping)); err != nil {
			return c.keyError("notification.ping", -1, "%v", err)
		}
	}
	if n.Hub != "" {
		if err := checkHub(n.Hub); err != nil {
			return c.keyError("notification.hub", -1, "%v", err)
		}
		return nil
	}
	for i, s := range c.Sets {
		for key, on := range map[string]*bool{"set.change_notification": s.ChangeNotification, "set.framework_notification": s.FrameworkNotification} {
			if on != nil && *on {
				return c.keyError(key, i, "set %q: a notification channel needs a hub: set hub in [notification]", s.Name)
			}
		}
	}
	return nil
}

// errHubCredentials refuses a hub URL with user:password@.
var errHubCredentials = errors.New("the URL holds credentials (user:password@), which every Capability List would publish: give the hub's URL without them")

// checkHub checks a hub's URL: absolute http(s), which every Capability
// List publishes, so never with credentials.
func checkHub(hub string) error {
	if u, err := url.Parse(hub); err == nil && u.User != nil {
		return errHubCredentials
	}
	return layout.CheckAbsoluteURL(hub)
}
