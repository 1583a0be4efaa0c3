package generator

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/viewer"
)

// What a build publishes depends on the source, the clock, and the
// inputs outputDigest identifies: the site resolves the digest once, and
// the state keeps it, so that a build can tell whether the last one
// published from the same (unchanged.go).

// OutputFormat is the version of the bytes rsgen writes for a given
// source, configuration and clock. Bump it with any change of what a
// document holds: a build whose state was written with another format
// takes the full path and writes every document again. The golden files
// record the format they were made with, and the generator's tests fail
// when they change while it stays the same (see TestMain). The document
// browser and the stylesheet enter the digest by their bytes.
const OutputFormat = 2

// outputDigest returns the digest of everything besides the source and the
// clock that shapes the bytes a build of cfg with opts publishes: the
// configuration but where its output is deployed, the options that change
// what is scanned or how lists are split, the output format and the
// embedded files. "" when it cannot be computed, which no fast path takes.
func outputDigest(cfg *config.Config, opts Options) string {
	c := *cfg
	c.Deploy = config.Deploy{} // where the output goes, not what it holds
	h := sha256.New()
	err := json.NewEncoder(h).Encode(struct {
		Format     int
		Embedded   string
		Config     *config.Config
		Exclude    []string
		ConfigFile string
		Entries    int
		Bytes      int64
	}{OutputFormat, embeddedDigest(), &c, opts.Exclude, opts.ConfigFile, opts.limits.entries, opts.limits.bytes})
	if err != nil {
		return ""
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// embeddedDigest is the digest of the files rsgen publishes from its own
// binary: the document browser and the stylesheet.
var embeddedDigest = sync.OnceValue(func() string {
	h := sha256.New()
	for _, f := range viewer.Files() {
		h.Write([]byte(f.Path + "\x00"))
		h.Write(f.Data)
	}
	h.Write([]byte(stylesheet))
	return hex.EncodeToString(h.Sum(nil))
})
