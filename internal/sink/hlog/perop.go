package hlog

import (
	"bufio"
	"fmt"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/outfile"
	"github.com/ycsbctl/ycsbctl/internal/run"
)

// OpFiles is YCSB's own hdrhistogram.fileoutput: one interval log per
// measurement, named <prefix><NAME>.hdr, in YCSB's units and layout so
// that tools reading YCSB's logs read these: values in whole microseconds,
// interval timestamps in seconds relative to the log's start, the max
// column divided by 1000 as YCSB 0.17.0's HdrHistogram (2.1.4) writes it
// (so it reads as milliseconds). The header says format version 1.3, not
// the 1.1 of YCSB 0.17.0's writer, because the histograms are in the V2
// compressed encoding that version introduced. The
// tagged combined log (FileSink) is ycsbctl's own addition and is written
// besides these.
type OpFiles struct {
	// Prefix is hdrhistogram.output.path; NamePrefix goes in front of
	// every measurement name ("Hdr" for the combined measurement types,
	// as YCSB names their HdrHistogram halves).
	Prefix, NamePrefix string
	// Start is the base time of every log (the run's start).
	Start time.Time

	mu    sync.Mutex
	files [measurement.NumSeries]*opLog
	err   error
}

// opLog is one measurement's log, written to a temporary file that takes
// its name at Close (package outfile).
type opLog struct {
	f *outfile.File
	w *bufio.Writer
}

// Path is the file a measurement's log goes to.
func (o *OpFiles) Path(s measurement.Series) string {
	return o.Prefix + o.NamePrefix + s.Name() + ".hdr"
}

// OnInterval appends one line per measured series; a series' file is
// created with its first interval, as YCSB creates it with the
// measurement.
func (o *OpFiles) OnInterval(u *run.Update) {
	if u.Progress.Warmup || u.Interval == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err != nil {
		return
	}
	iv := u.Interval
	for i, h := range iv.Hist {
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		if err := o.write(measurement.Series(i), iv.StartNs, iv.EndNs, h); err != nil {
			o.err = err
			return
		}
	}
}

func (o *OpFiles) write(s measurement.Series, startNs, endNs int64, h *hdrhistogram.Histogram) error {
	l := o.files[s]
	if l == nil {
		f, err := outfile.Create(o.Path(s), 0o644)
		if err != nil {
			return err
		}
		l = &opLog{f: f, w: bufio.NewWriter(f)}
		o.files[s] = l
		secs := float64(o.Start.UnixMilli()) / 1e3
		// Writes to a bufio.Writer fail only when its flush does, which
		// is checked where the log is flushed.
		_, _ = fmt.Fprintf(l.w, "#[Logging for: %s]\n", o.NamePrefix+s.Name())
		_, _ = fmt.Fprintf(l.w, "#[Histogram log format version 1.3]\n")
		_, _ = fmt.Fprintf(l.w, "#[StartTime: %.3f (seconds since epoch), %s]\n", secs, o.Start.UTC().Format("Mon Jan 02 15:04:05 MST 2006"))
		_, _ = fmt.Fprintf(l.w, "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n")
	}
	us := toMicros(h)
	enc, err := us.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return err
	}
	rel := float64(startNs-o.Start.UnixNano()) / 1e9
	_, _ = fmt.Fprintf(l.w, "%.3f,%.3f,%.3f,%s\n", rel, float64(endNs-startNs)/1e9, float64(us.Max())/1e3, enc)
	return l.w.Flush()
}

// toMicros re-records a nanosecond histogram in whole microseconds, the
// unit YCSB's logs hold (each bucket's middle, truncated as YCSB
// truncates).
func toMicros(h *hdrhistogram.Histogram) *hdrhistogram.Histogram {
	us := hdrhistogram.New(1, measurement.HighestNs/1000, measurement.SigFigs)
	for _, b := range h.Distribution() {
		if b.Count > 0 {
			_ = us.RecordValues((b.From+b.To)/2/1000, b.Count)
		}
	}
	return us
}

// Close closes every log and returns the first error met.
func (o *OpFiles) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	err := o.err
	for _, l := range o.files {
		if l == nil {
			continue
		}
		ferr := l.w.Flush()
		if ferr == nil {
			ferr = l.f.Commit()
		} else {
			l.f.Discard()
		}
		if err == nil {
			err = ferr
		}
	}
	return err
}
