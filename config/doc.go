// Package config owns rsgen's configuration: the rsgen.toml format, its
// defaults (all in Default), strict decoding that rejects unknown keys and bad
// values with the file and line they stand on, and the resolution of relative
// paths against the folder of the configuration file.
//
// Command-line flags override the file; the CLI applies them to the Config
// that Load returns and then calls Validate, so both paths share one set of
// checks.
package config
