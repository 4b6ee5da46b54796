package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ycsbctl/ycsbctl/internal/report"
)

func newCompareCmd(gs *GlobalState) *cobra.Command {
	var out, format string
	cmd := &cobra.Command{
		Use:   "compare RUN_DIR... [-o FILE] [--format html|csv]",
		Short: "Compare run bundles side by side: a table, and an HTML chart (or CSV)",
		Long: `Groups the runs by scenario (workload and phase) and compares each with
the first run of its scenario, the baseline: throughput (interval mean
with a 95% confidence interval) and latency percentiles of the main
operation. Differences within run-to-run noise are marked ≈, differences
beyond it * (Welch's t-test over per-interval values, corrected for
autocorrelation); ? means too few intervals to tell.

The table goes to stdout. The HTML comparison (throughput bars per
scenario and database, latency percentiles, throughput over time) goes
to compare.html unless -o names a file; --format csv writes the runs'
interval time series to compare.csv instead. -o - writes to stdout (and
then the table is not printed).`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			var runs []*report.Run
			for _, dir := range args {
				r, err := report.Load(dir)
				if err != nil {
					return invalid(err)
				}
				runs = append(runs, r)
			}
			c := report.NewComparison(runs)
			var write func(io.Writer) error
			switch format {
			case "html":
				write = func(w io.Writer) error { return c.WriteHTML(w, gs.Clock.Now()) }
				if out == "" {
					out = "compare.html"
				}
			case "csv":
				write = func(w io.Writer) error { return report.WriteCSV(w, runs) }
				if out == "" {
					out = "compare.csv"
				}
			default:
				return invalid(fmt.Errorf("--format %q: expected html or csv", format))
			}
			if out != "-" {
				if err := c.WriteTable(gs.Stdout); err != nil {
					return err
				}
			}
			return writeOutput(gs, out, write, args...)
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "output file (- for stdout)")
	cmd.Flags().StringVar(&format, "format", "html", "html or csv")
	return cmd
}
