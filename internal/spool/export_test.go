package spool

import "bytes"

// ReadBytes reads a spool held in memory, as OpenChecked reads a file:
// the fuzz targets run without file I/O.
func ReadBytes(b []byte, check Check) (*Reader, error) {
	return read(bytes.NewReader(b), int64(len(b)), "spool", check)
}
