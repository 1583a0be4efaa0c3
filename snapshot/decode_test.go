package snapshot

import (
	"bytes"
	"io"
)

// decodeAll reads a state from r as Load reads a file, but with every
// record in memory.
func decodeAll(r io.Reader) (*State, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return decodeState(bytes.NewReader(data), int64(len(data)), nil)
}
