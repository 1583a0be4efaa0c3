package watch

import "strings"

// IgnoredName reports whether name, the last element of a path, is a
// temporary or backup file that editors write while saving. Events on such
// files do not mark the tree dirty; the save's final rename or write onto
// the real file does.
//
// The names are those of vim (name~, .name.swp, .name.swx and the probe file
// 4913), emacs (.#name locks, #name# autosaves), GNOME's gedit
// (.goutputstream-XXXXXX), JetBrains IDEs (name___jb_tmp___,
// name___jb_old___) and the *.tmp files of many others.
func IgnoredName(name string) bool {
	switch {
	case name == "4913":
	case strings.HasSuffix(name, "~"):
	case strings.HasPrefix(name, ".") && (strings.HasSuffix(name, ".swp") || strings.HasSuffix(name, ".swx")):
	case strings.HasPrefix(name, ".#"):
	case len(name) > 1 && strings.HasPrefix(name, "#") && strings.HasSuffix(name, "#"):
	case strings.HasSuffix(name, ".tmp"):
	case strings.HasPrefix(name, ".goutputstream-"):
	case strings.Contains(name, "___jb_") && strings.HasSuffix(name, "___"):
	default:
		return false
	}
	return true
}
