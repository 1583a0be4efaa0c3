package config

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// FuzzParse: any input either parses into a configuration that passes
// its own value checks, or fails with a *Error; never a panic.
func FuzzParse(f *testing.F) {
	if data, err := os.ReadFile("example.toml"); err == nil {
		f.Add(string(data))
	}
	for _, s := range []string{
		"", "base_ulr = 1", "[changelist]\nrotate = 5", "[changelist]\nrotate = \"-1h\"", "hashes = []",
		"[[set]]\nname = \"A\"", "[[set]]\nname = \"a\"\n[[set]]\nname = \"a\"", "exclude = [\"[\"]",
		"[dumps]\npackage_size = \"1XB\"", "follow_symlinks = \"yes\"", "x = \"\x00\"", "[[set]]\npath = \"../up\"\nname = \"u\"",
		"spec_version = 1.0", "a.b.c = 1", "[set]\nname = 1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		cfg, err := Parse(strings.NewReader(data), "fuzz.toml")
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("Parse error %v (%T) is not a *config.Error", err, err)
			}
			return
		}
		if err := cfg.checkValues(); err != nil {
			t.Fatalf("Parse accepted values that checkValues refuses: %v", err)
		}
	})
}
