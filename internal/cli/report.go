package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/capacity"
	"github.com/ycsbctl/ycsbctl/internal/outfile"
	"github.com/ycsbctl/ycsbctl/internal/report"
	"github.com/ycsbctl/ycsbctl/internal/resultsdir"
)

func newReportCmd(gs *GlobalState) *cobra.Command {
	var out, format string
	cmd := &cobra.Command{
		Use:   "report RUN_DIR [-o FILE] [--format html|csv]",
		Short: "Write a self-contained HTML report (or a CSV time series) of a run bundle",
		Long: `Reads a run bundle written with --results (run.json, summary.txt,
merged.hlog) and writes one HTML file that needs no network to open:
throughput over time, latency percentiles over time per operation, the
full latency distribution per operation, per-agent comparison,
configuration and environment.

--format csv exports the interval time series instead (one row per
interval, and per agent and interval in distributed runs).

The output goes to RUN_DIR/report.html (or RUN_DIR/intervals.csv) unless
-o names a file; -o - writes to stdout. A file is written whole or not at
all, and only over a regular file (a symbolic link to one is followed);
a directory, device, FIFO or socket is refused (exit 2).

When RUN_DIR holds only the spool of a run whose process was killed (a
single host or a coordinator), the bundle is first rebuilt from it: the
run marked aborted, its exit code unknown, with every interval measured
before the end. A directory holding the spools of several runs is refused.

A capacity bundle (ycsbctl capacity --results DIR) gets the capacity
report: the latency-throughput curve of every operation with the
objectives and the capacity marked, and the probes' table; --format csv
writes one row per probe and operation (DIR/capacity.csv).`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			// report rebuilds spools and writes into the bundle: it
			// owns the directory meanwhile, and a live run's is refused.
			owned, err := ownForReport(gs, args[0])
			if err != nil {
				return err
			}
			defer owned.Release()
			if capacity.IsBundle(args[0]) {
				return reportCapacity(gs, args[0], out, format)
			}
			// A run killed mid-run leaves its spool, not a bundle:
			// rebuild what it had measured first.
			if used, err := bundle.Recover(args[0]); bundle.IsSpools(err) {
				return invalid(err)
			} else if err != nil {
				return fmt.Errorf("recovering %s: %w", args[0], err)
			} else if used != "" {
				sayRecovered(gs, "run", args[0], used)
			}
			r, err := report.Load(args[0])
			if err != nil {
				return invalid(err)
			}
			var write func(io.Writer) error
			switch format {
			case "html":
				write = func(w io.Writer) error { return report.WriteHTML(w, r, report.Options{Now: gs.Clock.Now()}) }
				if out == "" {
					out = filepath.Join(r.B.Dir, bundle.FileReport)
				}
			case "csv":
				write = func(w io.Writer) error { return report.WriteCSV(w, []*report.Run{r}) }
				if out == "" {
					out = filepath.Join(r.B.Dir, bundle.FileIntervals)
				}
			default:
				return invalid(fmt.Errorf("--format %q: expected html or csv", format))
			}
			return writeOutput(gs, out, write, r.B.Dir)
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "output file (- for stdout)")
	cmd.Flags().StringVar(&format, "format", "html", "html or csv")
	return cmd
}

// ownForReport takes the directory report reads (a bundle, or its
// run.json) for this process.
func ownForReport(gs *GlobalState, arg string) (*resultsdir.Owned, error) {
	dir := arg
	if st, err := os.Stat(arg); err == nil && !st.IsDir() {
		dir = filepath.Dir(arg)
	}
	owned, err := resultsdir.Open(dir, resultsdir.Options{Logf: func(format string, a ...any) { fmt.Fprintf(gs.Stderr, format+"\n", a...) }})
	switch {
	case resultsdir.IsHeld(err):
		return nil, invalid(fmt.Errorf("report %s: %w", arg, resultsdir.Advise(err, "report it once it has ended, when its bundle is written (a run is watched live with its status lines, the live view or --metrics-addr)")))
	case errors.Is(err, fs.ErrNotExist):
		return nil, invalid(fmt.Errorf("%s: not a run bundle: %w", arg, err))
	case errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS):
		// A bundle this user may only read (an archive, another user's)
		// can still be reported elsewhere with -o; no writer can own it
		// through this user either.
		fmt.Fprintf(gs.Stderr, "%s: read without owning it (%v)\n", dir, err)
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("report %s: %w", arg, err)
	}
	return owned, nil
}

// writeOutput writes to a file, whole or not at all and only over a
// regular file (package outfile: a refused target is a usage error), or
// to stdout for "-". A file that is part of a bundle's record (bundles
// are the directories the command reads), or inside a directory another
// process owns, is refused first.
func writeOutput(gs *GlobalState, path string, write func(io.Writer) error, bundles ...string) error {
	if path == "-" {
		return write(gs.Stdout)
	}
	if err := resultsdir.CheckOutput("-o", path, bundles...); err != nil {
		return invalid(err)
	}
	if err := outfile.WriteWith(path, 0o644, write); err != nil {
		if errors.Is(err, outfile.ErrNotFile) {
			return invalid(fmt.Errorf("-o %w", err))
		}
		return fmt.Errorf("-o %s: %w", path, err)
	}
	fmt.Fprintf(gs.Stderr, "Wrote %s\n", path)
	return nil
}

// sayRecovered tells the operator that a bundle was rebuilt from a
// spool, and what of the spool could not be read, as run.json says it.
func sayRecovered(gs *GlobalState, what, dir, used string) {
	fmt.Fprintf(gs.Stderr, "Recovered the bundle of an unfinished %s from its spool %s\n", what, used)
	if b, err := bundle.Read(dir); err == nil {
		for _, l := range b.Run.SpoolDamage.Reasons() {
			fmt.Fprintf(gs.Stderr, "  %s\n", l)
		}
	}
}

// reportCapacity writes a capacity bundle's report. The bundle of a probe
// whose process was killed is rebuilt from its spool first, as a run's.
func reportCapacity(gs *GlobalState, dir, out, format string) error {
	rec, err := capacity.Read(dir)
	if err != nil {
		return invalid(err)
	}
	for n := 1; n <= len(rec.Probes)+1; n++ {
		if err := recoverProbe(gs, filepath.Join(dir, bundle.ProbeDir(n))); err != nil {
			return err
		}
	}
	var write func(io.Writer) error
	switch format {
	case "html":
		write = func(w io.Writer) error { return report.WriteCapacityHTML(w, rec, report.Options{Now: gs.Clock.Now()}) }
		if out == "" {
			out = filepath.Join(dir, bundle.FileReport)
		}
	case "csv":
		write = func(w io.Writer) error { return report.WriteCapacityCSV(w, rec) }
		if out == "" {
			out = filepath.Join(dir, "capacity.csv")
		}
	default:
		return invalid(fmt.Errorf("--format %q: expected html or csv", format))
	}
	bundles := []string{dir}
	for _, p := range rec.Probes {
		if p.Bundle != "" {
			bundles = append(bundles, filepath.Join(dir, p.Bundle))
		}
	}
	return writeOutput(gs, out, write, bundles...)
}

// recoverProbe rebuilds the bundle of a probe whose process was killed,
// owning the probe's directory meanwhile (inside the capacity bundle this
// process owns).
func recoverProbe(gs *GlobalState, pd string) error {
	if _, err := os.Stat(pd); err != nil {
		return nil
	}
	owned, err := resultsdir.Open(pd, resultsdir.Options{Logf: func(format string, a ...any) { fmt.Fprintf(gs.Stderr, format+"\n", a...) }})
	if err != nil {
		return invalid(fmt.Errorf("report: %w", err))
	}
	defer owned.Release()
	if used, err := bundle.Recover(pd); err == nil && used != "" {
		sayRecovered(gs, "probe", pd, used)
	}
	return nil
}
