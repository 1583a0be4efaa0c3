//go:build !linux

package snapshot

// openNative opens the Tree's folder for os.Root to resolve names beneath
// it: no other system confines a lookup to a folder itself.
func openNative(t *Tree) (resolver, error) { return openRooted(t) }
