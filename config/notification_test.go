package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/rsgen/rsgen/notify"
)

// TestNotificationChannels: a hub switches the channels on, change by
// default and framework when asked, and a set overrides either, as it
// overrides [dumps].
func TestNotificationChannels(t *testing.T) {
	cfg, err := Parse(strings.NewReader(`
[notification]
hub = "https://hub.example.org/"
framework = true
ping = "websub"
[[set]]
name = "a"
[[set]]
name = "b"
change_notification = false
framework_notification = false
`), "x.toml")
	if err != nil {
		t.Fatal(err)
	}
	n := &cfg.Notification
	if !n.On() || n.Ping != notify.PingWebSub {
		t.Errorf("notification = %+v", *n)
	}
	a, b := &cfg.Sets[0], &cfg.Sets[1]
	if !a.WantsChangeNotification(n) || !a.WantsFrameworkNotification(n) {
		t.Error("set a has not both channels")
	}
	if b.WantsChangeNotification(n) || b.WantsFrameworkNotification(n) {
		t.Error("set b has a channel it turned off")
	}

	def := Default()
	s := Set{Name: "x"}
	if def.Notification.On() || s.WantsChangeNotification(&def.Notification) || def.Notification.Ping != notify.PingResourceSync {
		t.Errorf("the default has notifications: %+v", def.Notification)
	}
	def.Notification.Hub = "https://hub.example.org/"
	if !s.WantsChangeNotification(&def.Notification) || s.WantsFrameworkNotification(&def.Notification) {
		t.Error("with a hub, the default is a Change Notification channel alone")
	}
}

// TestNotificationErrorsNameTheLine: a ping that is not one of the two, a
// hub that is not an absolute http(s) URL or holds credentials, and a set
// that asks for a channel without a hub are refused at their line.
func TestNotificationErrorsNameTheLine(t *testing.T) {
	cases := []struct{ name, toml, want string }{
		{"ping", "[notification]\nhub = \"https://h.example/\"\nping = \"fat\"\n",
			`x.toml:3: notification.ping: ping "fat" is not "resourcesync" or "websub"`},
		{"relative hub", "[notification]\nhub = \"/hub\"\n", `x.toml:2: notification.hub: "/hub": must be an absolute http:// or https:// URL`},
		{"hub scheme", "[notification]\nhub = \"ftp://h.example/\"\n", `x.toml:2: notification.hub:`},
		{"hub credentials", "[notification]\nhub = \"https://u:secret@h.example/\"\n", `x.toml:2: notification.hub: the URL holds credentials`},
		{"hub type", "[notification]\nhub = 1\n", `x.toml:2: notification.hub: expected a string in quotes, got 1`},
		{"unknown key", "[notification]\nhubb = \"https://h.example/\"\n", `x.toml:2: unknown key "notification.hubb" (did you mean "hub"?)`},
		{"set without hub", "[[set]]\nname = \"a\"\nchange_notification = true\n",
			`x.toml:3: set.change_notification: set "a": a notification channel needs a hub: set hub in [notification]`},
		{"unknown set key", "[[set]]\nname = \"a\"\nchange_notifications = true\n", `(did you mean "change_notification"?)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(c.toml), "x.toml")
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is not a *config.Error", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not contain %q", err, c.want)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("error %q says the password", err)
			}
		})
	}
}
