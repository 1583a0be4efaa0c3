package destination

// Windows has no O_DIRECTORY or O_NOFOLLOW: the os.Root keeps every open
// inside DIR, and the folders on the way are checked (dir.go).
const (
	openDirectory = 0
	openNoFollow  = 0
)
