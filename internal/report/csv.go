package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
)

// WriteCSV exports the interval time series of one or more runs for
// spreadsheets: one row per interval for the merged view (scope "all") and
// one per agent and interval in distributed runs (scope "agent-N"). Every
// latency series any run recorded gets count, mean, p50, p95, p99, p99.9
// and max columns, in microseconds; cells of series an interval lacks
// stay empty.
func WriteCSV(w io.Writer, runs []*Run) error {
	cw := csv.NewWriter(w)
	series := seriesNames(runs)
	head := []string{"run", "run_id", "db", "scenario", "phase", "scope", "seq", "start_utc", "elapsed_s", "duration_s", "operations", "ops_per_sec", "cpu_seconds", "lag_ms"}
	for _, s := range series {
		for _, c := range []string{"count", "mean_us", "p50_us", "p95_us", "p99_us", "p99_9_us", "max_us"} {
			head = append(head, s+"_"+c)
		}
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	ff := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, r := range runs {
		fixed := []string{r.Name(), r.B.Run.RunID, r.DB(), r.Scenario(), r.B.Run.Phase}
		for _, iv := range r.Intervals {
			start := time.Unix(0, iv.StartUnixNs).UTC().Format("2006-01-02T15:04:05.000Z")
			el := ff(float64(iv.EndUnixNs-r.StartNs) / 1e9)
			dur := ff(float64(iv.EndUnixNs-iv.StartUnixNs) / 1e9)
			var cpu, lag float64
			for _, a := range iv.Agents {
				cpu += a.CPUSeconds
				lag = max(lag, float64(a.LagNs)/1e6)
			}
			row := append(append([]string(nil), fixed...), "all", fmt.Sprint(iv.Seq), start, el, dur, fmt.Sprint(iv.Operations), ff(iv.OpsPerSec), ff(cpu), ff(lag))
			row = appendSeries(row, series, iv.Series)
			if err := cw.Write(row); err != nil {
				return err
			}
			if len(iv.Agents) < 2 {
				continue
			}
			for _, a := range iv.Agents {
				row := append(append([]string(nil), fixed...), fmt.Sprintf("agent-%d", a.Index), fmt.Sprint(iv.Seq), start, el, dur,
					fmt.Sprint(a.Operations), ff(a.OpsPerSec), ff(a.CPUSeconds), ff(float64(a.LagNs)/1e6))
				row = appendSeries(row, series, a.Series)
				if err := cw.Write(row); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

func appendSeries(row []string, names []string, stats []bundle.SeriesStats) []string {
	for _, n := range names {
		s, ok := seriesStat(stats, n)
		if !ok {
			row = append(row, "", "", "", "", "", "", "")
			continue
		}
		row = append(row, fmt.Sprint(s.Count), strconv.FormatFloat(s.MeanUs, 'f', 2, 64), fmt.Sprint(s.P50Us), fmt.Sprint(s.P95Us),
			fmt.Sprint(s.P99Us), fmt.Sprint(s.P999Us), fmt.Sprint(s.MaxUs))
	}
	return row
}
