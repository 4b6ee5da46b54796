// Package hlog writes HdrHistogram interval logs (format version 1.3) with
// tags and absolute timestamps, readable by HdrHistogram's Java
// HistogramLogProcessor and the Python hdrh package.
package hlog

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Writer writes one log. It is safe for concurrent use.
type Writer struct {
	mu  sync.Mutex
	w   *bufio.Writer
	err error
}

// NewWriter writes the header: a producer comment, the format version,
// the start time and an explicit zero BaseTime, so that readers take the
// interval timestamps as absolute (seconds since the epoch).
func NewWriter(w io.Writer, start time.Time) *Writer {
	lw := &Writer{w: bufio.NewWriterSize(w, 256<<10)}
	secs := float64(start.UnixNano()) / 1e9
	lw.printf("#[Logging for: ycsbctl]\n")
	lw.printf("#[Histogram log format version 1.3]\n")
	lw.printf("#[StartTime: %.3f (seconds since epoch), %s]\n", secs, start.UTC().Format("Mon Jan 02 15:04:05 MST 2006"))
	lw.printf("#[BaseTime: 0.000 (seconds since epoch)]\n")
	lw.printf("\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n")
	if lw.err == nil {
		lw.err = lw.w.Flush()
	}
	return lw
}

// printf writes to the buffer unless an earlier write failed, keeping the
// first error for Flush and the next write to return.
func (lw *Writer) printf(format string, a ...any) {
	if lw.err == nil {
		_, lw.err = fmt.Fprintf(lw.w, format, a...)
	}
}

// ValidTag reports whether a tag can be written (no commas, spaces or line
// breaks, which the format cannot carry).
func ValidTag(tag string) bool { return !strings.ContainsAny(tag, ", \t\r\n") }

// WriteInterval writes one interval histogram (values in ns) and flushes,
// so that a log being written during a run is readable at any moment. The
// max column is in milliseconds, HdrHistogram's default unit ratio for
// nanosecond values.
func (lw *Writer) WriteInterval(tag string, startNs, endNs int64, h *hdrhistogram.Histogram) error {
	enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return err
	}
	raw, err := base64.StdEncoding.DecodeString(string(enc))
	if err != nil {
		return err
	}
	if err := lw.WriteEncoded(tag, startNs, endNs, h.Max(), raw); err != nil {
		return err
	}
	return lw.Flush()
}

// WriteEncoded writes one interval line from an already V2-compressed
// histogram (as agents send them), without re-encoding: a 100-agent run
// writes thousands of lines, and re-encoding each costs milliseconds. It
// buffers; call Flush when done.
func (lw *Writer) WriteEncoded(tag string, startNs, endNs, maxNs int64, v2 []byte) error {
	if tag != "" && !ValidTag(tag) {
		return fmt.Errorf("hlog: invalid tag %q", tag)
	}
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.err != nil {
		return lw.err
	}
	if tag != "" {
		lw.printf("Tag=%s,", tag)
	}
	lw.printf("%.3f,%.3f,%.3f,", float64(startNs)/1e9, float64(endNs-startNs)/1e9, float64(maxNs)/1e6)
	if lw.err != nil {
		return lw.err
	}
	enc := base64.NewEncoder(base64.StdEncoding, lw.w)
	if _, err := enc.Write(v2); err != nil {
		lw.err = err
		return err
	}
	if err := enc.Close(); err != nil {
		lw.err = err
		return err
	}
	lw.err = lw.w.WriteByte('\n')
	return lw.err
}

// Flush writes buffered lines out.
func (lw *Writer) Flush() error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.err != nil {
		return lw.err
	}
	lw.err = lw.w.Flush()
	return lw.err
}
