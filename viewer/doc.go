// Package viewer owns rsgen's document browser: a static page, script and
// stylesheet published with every site at resourcesync/index.html, which
// renders any ResourceSync document of the site from its XML (fetch and
// DOMParser) in a browser, without XSLT. The generator publishes Files as
// they are; nothing in them depends on the site.
package viewer
