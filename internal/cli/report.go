package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/ycsbctl/ycsbctl/coordinator"
	"github.com/ycsbctl/ycsbctl/internal/report"
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
-o names a file; -o - writes to stdout. When RUN_DIR holds only the spool
of a coordinator that was killed, the bundle is first rebuilt from it
(the run marked aborted, with every interval merged before the end).`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			// A coordinator killed mid-run leaves its spool, not a
			// bundle: rebuild what it had merged first.
			if ok, err := coordinator.Recover(args[0]); err != nil {
				return fmt.Errorf("recovering %s: %w", args[0], err)
			} else if ok {
				fmt.Fprintf(gs.Stderr, "Recovered the bundle of an unfinished run from its spool in %s\n", args[0])
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
					out = filepath.Join(r.B.Dir, "report.html")
				}
			case "csv":
				write = func(w io.Writer) error { return report.WriteCSV(w, []*report.Run{r}) }
				if out == "" {
					out = filepath.Join(r.B.Dir, "intervals.csv")
				}
			default:
				return invalid(fmt.Errorf("--format %q: expected html or csv", format))
			}
			return writeOutput(gs, out, write)
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "output file (- for stdout)")
	cmd.Flags().StringVar(&format, "format", "html", "html or csv")
	return cmd
}

// writeOutput writes to a file (atomically enough for a report: a
// temporary file renamed into place) or to stdout for "-".
func writeOutput(gs *GlobalState, path string, write func(io.Writer) error) error {
	if path == "-" {
		return write(gs.Stdout)
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("-o %s: %w", path, err)
	}
	if err := write(f); err != nil {
		// The write error is the one to report; a failure to clean up
		// the partial file is reported with it.
		return errors.Join(err, f.Close(), os.Remove(tmp))
	}
	if err := f.Close(); err != nil {
		return errors.Join(err, os.Remove(tmp))
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	fmt.Fprintf(gs.Stderr, "Wrote %s\n", path)
	return nil
}
