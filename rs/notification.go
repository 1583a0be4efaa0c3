package rs

// The vocabulary of the ResourceSync notification specifications
// (ResourceSync Change Notification 1.0.1 and ResourceSync Framework
// Notification 1.0.1, 2017-07-20), which push over WebSub what the core
// specification lets Destinations pull.

// Capability values of notification payloads and of the Capability List
// entries that advertise their channels.
const (
	// CapChangeNotification: a notification of changes to resources.
	CapChangeNotification = "change-notification"
	// CapFrameworkNotification: a notification of changes to the
	// capability documents themselves.
	CapFrameworkNotification = "framework-notification"
)

// Link relations of WebSub (W3C Recommendation, 2018-01-23) that the
// notification specifications use, in the Capability List and in HTTP Link
// headers.
const (
	RelHub  = "hub"  // the WebSub hub of a channel
	RelSelf = "self" // the topic URI of a channel
)

// NotificationMediaType is the Content-Type of a notification payload, as
// a Source submits it to the hub and as a topic URI answers.
const NotificationMediaType = "application/xml"
