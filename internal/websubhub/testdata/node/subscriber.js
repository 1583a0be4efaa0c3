'use strict';
// Runs the npm package pubsubhubbub, a WebSub subscriber nobody at rsgen
// wrote, for TestNodeSubscriber: it subscribes to TOPIC at HUB with its
// callback on 127.0.0.1:PORT, prints one JSON line per thing that happens,
// and unsubscribes when it reads "unsubscribe" on standard input.
const crypto = require('crypto');
const readline = require('readline');
const pubSubHubbub = require('pubsubhubbub');

const { PORT, HUB, TOPIC, SECRET } = process.env;
const say = (o) => process.stdout.write(JSON.stringify(o) + '\n');

const sub = pubSubHubbub.createServer({
  callbackUrl: 'http://127.0.0.1:' + PORT + '/callback',
  secret: SECRET,
  leaseSeconds: 3600,
});
sub.on('error', (err) => say({ event: 'error', message: String(err) }));
sub.on('denied', (d) => say({ event: 'denied', topic: d.topic, error: String(d.error) }));
sub.on('subscribe', (d) => say({ event: 'subscribe', topic: d.topic }));
sub.on('unsubscribe', (d) => say({ event: 'unsubscribe', topic: d.topic }));
sub.on('feed', (d) => say({
  event: 'feed',
  topic: d.topic,
  hub: d.hub,
  contentType: d.headers['content-type'],
  body: d.feed.toString('base64'),
}));
sub.on('listen', () => {
  sub.subscribe(TOPIC, HUB, (err) => say({ event: 'requested', error: err ? String(err) : null }));
  // pubsubhubbub 1.0.2 sends the hub HMAC-SHA1(secret, topic) as
  // hub.secret, but checks signatures with the secret itself, so that no
  // signed delivery would ever pass. Checking with what it sent (set
  // after the request was made) tests the hub's signatures as the package
  // means to.
  sub.secret = crypto.createHmac('sha1', SECRET).update(TOPIC).digest('hex');
  say({ event: 'listen' });
});

readline.createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() === 'unsubscribe') {
    sub.unsubscribe(TOPIC, HUB, (err) => say({ event: 'unsubscribe-requested', error: err ? String(err) : null }));
  }
}).on('close', () => process.exit(0));

sub.listen(Number(PORT), '127.0.0.1');
