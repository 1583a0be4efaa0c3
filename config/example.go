package config

import _ "embed"

// Example is the commented configuration `rsgen init` writes. The same text
// is rsgen.toml.example at the root of the repository; a test keeps the two
// equal.
//
//go:embed example.toml
var Example string
