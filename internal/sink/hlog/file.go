package hlog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/outfile"
	"github.com/ycsbctl/ycsbctl/internal/run"
)

// FileSink is the sink behind hdrhistogram.fileoutput: it writes every
// measured interval's histograms to one log, tagged by series name
// (READ, UPDATE, Intended-READ, ...).
// The log is written to a temporary file beside its path (package
// outfile) and takes its name when the run ends: what carries the name is
// always a whole log.
type FileSink struct {
	path string
	f    *outfile.File
	w    *Writer

	mu  sync.Mutex
	err error
}

// CreateFile opens path for writing. Its directory may be created, but
// only its last component: a mistyped path must not grow a tree of
// directories anywhere on the machine.
func CreateFile(path string, start time.Time) (*FileSink, error) {
	dir := filepath.Dir(path)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		if _, perr := os.Stat(filepath.Dir(dir)); perr != nil {
			return nil, fmt.Errorf("cannot create %s: neither %s nor its parent exists", path, dir)
		}
		if err := os.Mkdir(dir, 0o755); err != nil {
			return nil, err
		}
	}
	f, err := outfile.Create(path, 0o644)
	if err != nil {
		return nil, err
	}
	return &FileSink{path: path, f: f, w: NewWriter(f, start)}, nil
}

// Discard removes the log of a run that never ran.
func (s *FileSink) Discard() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.f.Discard()
}

// Path is the log's file name.
func (s *FileSink) Path() string { return s.path }

// OnInterval writes the interval's histograms; warm-up is not measured.
func (s *FileSink) OnInterval(u *run.Update) {
	if u.Progress.Warmup {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return
	}
	iv := u.Interval
	for i, h := range iv.Hist {
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		if err := s.w.WriteInterval(measurement.Series(i).Name(), iv.StartNs, iv.EndNs, h); err != nil {
			s.err = err
			return
		}
	}
}

// Close closes the file and returns the first error met while writing.
func (s *FileSink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		s.f.Discard()
		return fmt.Errorf("writing %s: %w", s.path, s.err)
	}
	cerr := s.w.Flush()
	if cerr == nil {
		cerr = s.f.Commit()
	}
	if cerr != nil {
		return fmt.Errorf("writing %s: %w", s.path, cerr)
	}
	return nil
}
