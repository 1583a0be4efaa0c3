package notify

// Test hooks, compiled only into the tests.

// SetLimits changes the entry and byte limits of the outbox's payloads, so
// that the tests split payloads without 50,000 entries.
func (o *Outbox) SetLimits(entries int, bytes int64) { o.limits = [2]int64{int64(entries), bytes} }

// Callback returns the subscription's callback URL.
func (s *Subscription) Callback() string { return s.callback }

// Secret returns the subscription's secret.
func (s *Subscription) Secret() []byte { return s.secret }
