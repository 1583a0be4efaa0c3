package deploy

import (
	"slices"
	"testing"
	"time"
)

// typeChangeSites builds two sites served at base that publish the same
// paths as file and as folder: the first a/dir/b.txt and thing/c.txt, the
// second a/dir and thing/c.txt/d.txt, as one site's source would after the
// change. Both have other.txt, which the second leaves out.
func typeChangeSites(t *testing.T, base string) (one, two *site) {
	t.Helper()
	one = &site{dir: t.TempDir()}
	for _, rel := range []string{"a/dir/b.txt", "thing/c.txt", "other.txt"} {
		one.write(t, rel, rel+"\n")
	}
	two = &site{dir: t.TempDir()}
	for _, rel := range []string{"a/dir", "thing/c.txt/d.txt"} {
		two.write(t, rel, rel+"\n")
	}
	return newSite(t, one.dir, "", base), newSite(t, two.dir, "", base)
}

// TestS3TypeChange deploys a path that changed between file and folder, at
// depth, either way, to versitygw, which keeps objects as files and so
// cannot hold a and a/b at once (real S3 can): the stale keys are
// deleted before the new ones are written, even with a grace period, and
// the bucket then holds exactly the output. A Destination finds the Source
// whole.
func TestS3TypeChange(t *testing.T) {
	v := startVersity(t)
	one, two := typeChangeSites(t, v.website)
	store := v.store(t, v.endpoint, "")
	run(t, one.options(store))
	opts := two.options(store)
	opts.Grace = time.Hour
	sum := run(t, opts)
	if sum.Deletes != 2 || sum.Deferred != 1 {
		t.Errorf("%d deleted, %d waiting; want a/dir/b.txt and thing/c.txt deleted, other.txt waiting", sum.Deletes, sum.Deferred)
	}
	checkKeys(t, v, two, "other.txt")
	checkDestination(t, v.website)

	sum = run(t, one.options(store))
	if sum.Deletes != 2 {
		t.Errorf("%d deleted on the way back; want a/dir and thing/c.txt/d.txt", sum.Deletes)
	}
	checkKeys(t, v, one)
	checkDestination(t, v.website)
}

// checkKeys checks that the bucket holds the files s publishes there, and
// extra, and no other.
func checkKeys(t *testing.T, v *versity, s *site, extra ...string) {
	t.Helper()
	want := append(keysOf(s.outputFiles(t, v.store(t, v.endpoint, ""))), extra...)
	var got []string
	for _, k := range v.keys(t, "") {
		if !slices.Contains([]string{MetaDir + "/manifest"}, k) {
			got = append(got, k)
		}
	}
	if !slices.Equal(sorted(got), sorted(want)) {
		t.Errorf("the bucket holds %v\nwant %v", sorted(got), sorted(want))
	}
}
