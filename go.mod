module github.com/rsgen/rsgen

go 1.26.0

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/fsnotify/fsnotify v1.10.1
	github.com/rogpeppe/go-internal v1.16.0
	github.com/zeebo/blake3 v0.2.4
	golang.org/x/net v0.62.0
	golang.org/x/sys v0.49.0
	gopkg.in/yaml.v3 v3.0.1
)

require (
	github.com/klauspost/cpuid/v2 v2.0.12 // indirect
	golang.org/x/tools v0.26.0 // indirect
)
