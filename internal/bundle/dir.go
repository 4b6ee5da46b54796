package bundle

import (
	"fmt"
	"strings"

	"github.com/ycsbctl/ycsbctl/internal/spool"
	"github.com/ycsbctl/ycsbctl/internal/telemetry"
)

// Files that report and compare write into a bundle directory by default.
const (
	FileReport    = "report.html"
	FileIntervals = "intervals.csv"
)

// A capacity bundle (ycsbctl capacity --results) holds its record and one
// run bundle per probe, in directories probe-01, probe-02, ...
const (
	FileCapacity   = "capacity.json"
	probeDirPrefix = "probe-"
)

// ProbeDir is probe n's bundle directory inside a capacity bundle.
func ProbeDir(n int) string { return fmt.Sprintf("%s%02d", probeDirPrefix, n) }

// IsProbeDir reports whether name is a probe's directory (ProbeDir).
func IsProbeDir(name string) bool {
	n, ok := strings.CutPrefix(name, probeDirPrefix)
	return ok && n != "" && strings.Trim(n, "0123456789") == ""
}

// ownFiles are the files a bundle directory may hold that belong to its
// run: a new run refuses a directory holding any of them, and --overwrite
// replaces them, spools included.
var ownFiles = []string{FileRunJSON, FileSummary, FileHlog, FileReport, FileIntervals, FileCapacity, telemetry.RawFile}

// recordFiles are the files of a bundle that are its record, not a view
// of it: what no output a user names may replace (a report's own files,
// report.html and intervals.csv, may be written anywhere).
var recordFiles = []string{FileRunJSON, FileSummary, FileHlog, FileCapacity, telemetry.RawFile, SuiteState, SuiteSource}

// A suite's results directory holds its state and the suite file it ran
// (package suite names them, which imports this one; a test keeps the two
// in step).
const (
	SuiteState  = "suite.json"
	SuiteSource = "suite.yaml"
)

// IsOwn reports whether a directory entry belongs to a bundle. Temporary
// files of an interrupted write (package outfile) do not: they are the
// debris of a dead writer, removed by the directory's next owner.
func IsOwn(name string) bool {
	for _, f := range ownFiles {
		if name == f {
			return true
		}
	}
	return IsProbeDir(name) || strings.HasPrefix(name, spool.Prefix)
}

// IsRecord reports whether a file of a bundle directory is part of the
// run's record (run.json, summary.txt, merged.hlog, telemetry.csv,
// capacity.json, a spool) or of a suite's (suite.json, suite.yaml).
func IsRecord(name string) bool {
	for _, f := range recordFiles {
		if name == f {
			return true
		}
	}
	return strings.HasPrefix(name, spool.Prefix)
}
