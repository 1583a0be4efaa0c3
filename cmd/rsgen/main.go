// Command rsgen generates a static ResourceSync site from a source tree.
// This package is the command line only: it parses flags, renders events and
// maps errors to exit codes; everything else lives in the packages it calls.
package main

import "os"

func main() { os.Exit(Main()) }
