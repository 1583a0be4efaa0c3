package destination

// SetSortMemory sets how many bytes a sort holds before it spills, and
// returns what puts the default back.
func SetSortMemory(n int) (restore func()) {
	old := sortMemory
	sortMemory = n
	return func() { sortMemory = old }
}
