package main

import (
	"sort"

	"github.com/rsgen/rsgen/config"
)

// helpTopics are the `rsgen help TOPIC` pages that are not commands.
func helpTopics() map[string]string {
	return map[string]string{
		"config":  configTopic,
		"hosting": hostingTopic,
		"ci":      ciTopic,
	}
}

func topicNames() []string {
	var names []string
	for n := range helpTopics() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

var configTopic = `rsgen.toml: every key, with its default

rsgen reads ./rsgen.toml, or the file given with --config. Every key is
optional except base_url; flags of build and status override the file.
Relative paths are relative to the file's folder. Unknown keys and bad
values are errors that name the file and line, and the closest valid key.
"rsgen init" writes this text as rsgen.toml:

` + config.Example

const hostingTopic = `Hosting the output

The output folder is a static site: any web server serves it. Three things
need the host's help, and [publish] targets writes the host's configuration
for them next to the documents, rewritten by every build (a target turned
off has its file removed):

  - the Source Description, /.well-known/resourcesync, has no extension:
    it must be served as application/xml;
  - every resource of a set should carry Link: <CAPABILITY LIST>;
    rel="resourcesync";
  - caching: what rsgen never rewrites (closed Change Lists and Change
    Dumps, archived documents, dump packages and their manifests, mementos
    and patches) is cached for a year as immutable; every other file rsgen
    writes changes from build to build and is cached for [publish]
    short_cache (5m). rsgen deploy gives S3 objects the same headers.
  - with [notification] hub set, each notification topic
    (resourcesync/SET/notification/*.xml) is served as application/xml,
    no-cache, with Link: <TOPIC>; rel="self", <HUB>; rel="hub".

A base_url with a path (https://OWNER.github.io/REPO/, a project site on
GitHub Pages) works, but Destinations look for the Source Description at the
root of the host, /.well-known/resourcesync (spec section 8, RFC 8615),
where such an output is not. rsgen warns once per base URL. Then either
serve the output at the root of a host (a custom domain on Pages), or
publish a copy of .well-known/resourcesync, or a redirect to it, at the
root, or give Destinations the Source Description's full URL:
BASE_URL.well-known/resourcesync.

[publish]
targets = ["github-pages", "netlify", "cloudflare-pages", "nginx", "apache"]

github-pages      writes .nojekyll (Jekyll would drop the .well-known folder).
                  Pages sets no custom headers: the Source Description is
                  served as application/octet-stream, which ResourceSync
                  clients accept. Deploy with the workflow in
                  example-site/github-pages-workflow.yml: upload with
                  include-hidden-files: true (actions/upload-pages-artifact
                  drops dot-folders otherwise) and keep rsgen's state
                  between runs (see "rsgen help ci").
netlify,          write _headers: content types, Cache-Control and Link
cloudflare-pages  headers. Cloudflare reads at most 100 rules; past that the
                  rules of the oldest closed lists are left out (they are then
                  revalidated, which is correct, only slower). A set that is
                  one folder needs one Link rule; a set chosen by globs needs
                  one rule per file.
nginx             writes rsgen-nginx.conf, to include in the server block
                  whose root is the output folder:
                      server { root /srv/public; include /srv/public/rsgen-nginx.conf; }
                  It is checked with nginx -t and served by nginx in rsgen's
                  tests. Its locations send only their own add_header lines.
apache            writes .htaccess (needs mod_headers and AllowOverride
                  FileInfo).

A web server that serves the output folder in place: resources are hard
links to the source files by default, so a tool that rewrites a source file
in place (one that appends, vim on a file with several links) changes the
served bytes at once, before a build publishes their new length and hash.
[publish] resources chooses how they are placed:

  resources = "link"     (the default) hard links, copies across file
                         systems: when rsgen deploy or a CI step uploads the
                         output right after each build, or sources are only
                         ever replaced, never rewritten in place.
  resources = "copy"     copies: when nginx or Apache serves the output
                         folder itself while sources are edited in place;
                         the served bytes then change only with a build.
  resources = "reflink"  as "copy", but clones on Btrfs, XFS, bcachefs or
                         ZFS 2.2, which share their blocks with the source
                         until either changes (copies where the file system
                         cannot clone): a copy's safety without its room.

S3 and S3-compatible services cannot be configured with a file: publish there
with "rsgen deploy" ([deploy] to = "s3://bucket/prefix"), which sends each
object with its content type and Cache-Control, in the order that keeps
every published document's links valid. S3 cannot send Link headers: a
CDN in front of the bucket must add those of the resources and of the
notification topics (rsgen check warns of a topic without them).

The hosting files are never listed as resources, and nginx and Apache are
told not to serve them. A source file at the same path fails the build.

Discovery helpers, each off by default:

  robots = true      robots.txt with a "Sitemap:" line per Resource List.
                     Off by default because search engines then index every
                     URI of the lists, and the URIs of their rs:ln links too.
                     Crawlers read robots.txt only at the root of a host.
  html_link = true   inserts <link rel="resourcesync" href="CAPABILITY LIST">
                     right after the <head> start tag of every HTML resource
                     of a set. The published bytes then differ from the
                     source file's: they are written, never hard-linked, and
                     the published length and hashes are those of the
                     published bytes. Such files are read on every build.

Human-readable documents: viewer = true (the default) publishes
resourcesync/index.html, a page that shows every document of the Source
with its links in any browser. stylesheet = true publishes
resourcesync/_stylesheet.xsl and references it from every document with an
<?xml-stylesheet?> instruction; it is off by default because Chromium warns
about XSLT and is removing it. XML clients ignore both.`

const ciTopic = `Running rsgen in CI

A build publishes what changed since the state snapshot (the state key,
by default .rsgen next to rsgen.toml). A CI job that starts without the state of the
previous run would publish every file as created on every push, so keep it:

  1. cache the state folder between runs (GitHub: actions/cache with a key
     per run and a restore-keys prefix, so the newest state is restored);
  2. when the cache is gone (caches expire), put the previously published
     output in the output folder before building: rsgen rebuilds its state
     from it (the Resource Lists, Change Lists and closed lists), and files
     whose content did not change produce no event. rsgen status says what
     the next build would publish; --state-from-output forces a rebuild of
     the state from the output.

example-site/github-pages-workflow.yml does both for GitHub Pages, and a
test runs its rsgen steps twice with the state carried over as it says.

Flags for CI:

  rsgen build --json       one JSON object on stdout: "ok", "time",
                           "resources" (total, created, updated, deleted,
                           placed, removed), "read" (files, bytes),
                           "documents" (written, unchanged, removed),
                           "written" (paths), "warnings" (path, message),
                           "durations" (scan_ms, total_ms); "ok": false and
                           "error" when the build fails
  rsgen build --quiet      nothing but errors and warnings
  rsgen check --strict --verify-content public
                           fails on any error or warning, reading every
                           resource; --format json for machines
  SOURCE_DATE_EPOCH / --now
                           the build time, for reproducible output

Progress goes to stderr: a status line on a terminal, a plain
"rsgen: progress:" line every 10s in a log once a build runs that long.

After the site's own deploy step (GitHub Pages, say), rsgen notify sends
the push notifications of the builds ([notification]) to the hub; rsgen
deploy sends them itself.

Exit codes: 0 success, 1 failure, 2 usage or configuration error,
3 published but notifications pending (deploy, notify: the hub did not take
them; they stay in the outbox for the next run), 130 interrupted.`
