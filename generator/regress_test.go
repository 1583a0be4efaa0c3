package generator_test

// Regression tests for the items of the real-trees issue (#13): each
// reproduces a tree, a sequence of builds or an input that once broke a
// build, lost data or leaked a file.

import (
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
)

// everything turns on every capability that has its own code path:
// dumps in small packages, all archives, versions and patches, links.
func everything(c *config.Config) {
	c.Dumps.ResourceDump, c.Dumps.ChangeDump = true, true
	c.Dumps.PackageSize = 16 << 10
	c.Archives = config.Archives{ChangeLists: true, ChangeDumps: true, ResourceLists: true, ResourceDumps: true,
		SnapshotEvery: config.Duration{Duration: time.Hour}}
	c.Publish.Targets = config.Targets
	c.Publish.HTMLLink = true
}

// TestFolderBesideDashedName: a folder X beside names X-… and X.… (apt/
// and apt-transport-https/ in /usr/share/doc) sort differently byte by
// byte than in a walk; dump planning once used the byte order and failed
// the build.
func TestFolderBesideDashedName(t *testing.T) {
	s := newSite(t, testBaseURL, everything)
	for _, p := range []string{"apt/copyright", "apt-transport-https/copyright", "apt.conf/x", "apt_x", "python3/README", "python3-dev/README", "python3.11/README"} {
		s.write(p, "text of "+p)
	}
	s.build(t0)
	s.write("apt/copyright", "changed")
	s.write("apt-transport-https/copyright", "changed too")
	s.write("python3.11/NEWS", "new")
	s.build(t0.Add(time.Minute))
	s.remove("apt.conf/x")
	s.build(t0.Add(2 * time.Minute))
}
