package spec

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/editdist"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/telemetry"
	"github.com/ycsbctl/ycsbctl/internal/workload"
)

// Known declares every property the client, the measurements and the
// output read (the core workload and the adapters declare theirs), with
// YCSB's defaults. A test proves Parse reads nothing else.
func Known() []properties.Known {
	return []properties.Known{
		{Name: PropDB, Default: "embedded", Help: "the adapter, by name or YCSB class (site.ycsb.db.CassandraCQLClient, ...)"},
		{Name: PropWorkload, Default: "site.ycsb.workloads.CoreWorkload", Help: "the workload class (CoreWorkload only)"},
		{Name: PropThreads, Default: "1", Help: "client threads (-threads); per agent in distributed runs"},
		{Name: PropTarget, Default: "0", Help: "total operations per second (-target); 0 = unthrottled"},
		{Name: PropStatus, Default: "false", Help: "print status lines (-s)"},
		{Name: PropLabel, Default: "", Help: "label prefixed to status lines (-l)"},
		{Name: PropStatusInterval, Default: "10", Help: "seconds between status lines and intervals"},
		{Name: PropMaxExecution, Default: "0", Help: "time limit in seconds (0 = none)"},
		{Name: PropWarmupTime, Default: "0", Help: "seconds run before measuring, neither measured nor counted"},
		{Name: PropWarmupOps, Default: "0", Help: "operations run before measuring, neither measured nor counted"},
		{Name: PropMeasurementMode, Default: "op", Help: "op, intended or both (coordinated omission)"},
		{Name: PropMeasurementType, Default: "hdrhistogram", Help: "hdrhistogram, histogram, raw, timeseries, hdrhistogram+histogram or hdrhistogram+raw"},
		{Name: PropHistogramBuckets, Default: "1000", Help: "1 ms buckets of measurementtype=histogram"},
		{Name: PropRawOutputFile, Default: "", Help: "file raw samples are appended to (stdout when empty)"},
		{Name: PropRawNoSummary, Default: "false", Help: "raw: leave out the summary statistics"},
		{Name: PropReportEachError, Default: "false", Help: "record failed operations as <OP>-<STATUS> instead of <OP>-FAILED"},
		{Name: PropTrackedErrors, Default: "", Help: "statuses recorded as <OP>-<STATUS> (comma list)"},
		{Name: PropTrackRuntime, Default: "false", Help: "goroutines, heap and GC in status lines and the summary"},
		{Name: PropTrackJVM, Default: "false", Help: "YCSB's name for ycsbctl.trackruntime"},
		{Name: PropPercentiles, Default: "50,95,99", Help: "percentiles in the summary"},
		{Name: PropExporter, Default: "site.ycsb.measurements.exporter.TextMeasurementsExporter", Help: "text, JSON or JSON array exporter"},
		{Name: PropExportFile, Default: "", Help: "file for the final summary (stdout when empty)"},
		{Name: PropHdrFileOutput, Default: "false", Help: "write an HdrHistogram interval log"},
		{Name: PropHdrOutputPath, Default: "", Help: "path (prefix) of the HdrHistogram log"},
		{Name: PropHistogramVerbose, Default: "false", Help: "print every histogram bucket in the summary"},
		{Name: PropTimeseriesGran, Default: "1000", Help: "timeseries bucket in milliseconds"},
		{Name: PropMaxErrorRate, Default: "", Help: "exit 5 when more than this share of operations failed"},
		{Name: PropTUI, Default: "true", Help: "the live terminal view (--no-tui sets false)"},
		{Name: PropMetricsAddr, Default: "", Help: "serve Prometheus metrics here (--metrics-addr)"},
		{Name: PropMetricsLinger, Default: "0", Help: "seconds /metrics stays up after the run"},
		{Name: PropMetricsStartDelay, Default: "0", Help: "seconds the load waits after /metrics shows the run at zero (at least one scrape interval)"},
		{Name: PropResults, Default: "", Help: "write the run bundle to this directory (--results)"},
		{Name: PropOverwrite, Default: "false", Help: "replace the bundle already in the results directory (--overwrite)"},
		{Name: PropStopGrace, Default: "10", Help: "seconds a graceful stop (first SIGINT/SIGTERM, q) waits for calls in flight before aborting them"},
		{Name: telemetry.PropEnabled, Default: "true", Help: "sample every load generator's host, database processes and database internals each second (false: off)"},
		{Name: telemetry.PropPids, Default: "", Help: "the database server's processes on each host: a pid file (path with a slash), pids (12,34) or a name/command-line pattern"},
		{Name: telemetry.PropHostMetrics, Default: "false", Help: "also serve host-wide CPU, disk and network gauges on /metrics (node_exporter serves them otherwise)"},
	}
}

// unknownWarning names the properties nobody reads, each with the nearest
// known name; empty when there are none. A property another adapter reads
// is named as such.
func unknownWarning(p *properties.Properties, info *adapters.Info) string {
	return UnknownWarning(p.Keys(), info)
}

// UnknownWarning is the unknown-property warning for keys alone: an agent
// warns about its own properties (`agent -p`), which its coordinator's
// parse never saw.
func UnknownWarning(keys []string, info *adapters.Info) string {
	var unknown []string
	for _, k := range keys {
		if hint, unread := Unread(k, info); unread {
			unknown = append(unknown, strings.TrimSpace(properties.Printable(k)+" "+hint))
		}
	}
	if len(unknown) == 0 {
		return ""
	}
	sort.Strings(unknown)
	return "Warning: properties that nothing reads (ignored): " + strings.Join(unknown, ", ")
}

// Unread reports whether nothing reads key in a run of the adapter's (not
// the client, the measurements, the core workload or the adapter), and
// then a hint in parentheses, empty when there is none: the adapter that
// reads it instead, or the nearest known name. A suite refuses what its
// file sets that nothing reads with it.
func Unread(key string, info *adapters.Info) (hint string, unread bool) {
	known := append(append(Known(), workload.Known()...), info.Properties...)
	if _, ok := properties.FindKnown(known, key); ok {
		return "", false
	}
	if other := otherAdapter(key, info.Name); other != "" {
		return fmt.Sprintf("(read by the %s adapter, not by %s)", other, info.Name), true
	}
	if near := nearest(key, known); near != "" {
		return fmt.Sprintf("(did you mean %s?)", near), true
	}
	if near, owner := nearestElsewhere(key, info.Name); near != "" {
		return fmt.Sprintf("(did you mean %s, read by the %s adapter?)", near, owner), true
	}
	return "", true
}

// otherAdapter names another adapter that declares key.
func otherAdapter(key, self string) string {
	for _, n := range adapters.Names() {
		info, err := adapters.Lookup(n)
		if err != nil || info.Name == self {
			continue
		}
		if _, ok := properties.FindKnown(info.Properties, key); ok {
			return info.Name
		}
	}
	return ""
}

// nearestElsewhere looks for a typo of another adapter's property.
func nearestElsewhere(key, self string) (string, string) {
	for _, n := range adapters.Names() {
		info, err := adapters.Lookup(n)
		if err != nil || info.Name == self {
			continue
		}
		if near := nearest(key, info.Properties); near != "" {
			return near, info.Name
		}
	}
	return "", ""
}

// nearest returns the known name closest to key by edit distance, when it
// is close enough to be a typo.
func nearest(key string, known []properties.Known) string {
	best, bestD := "", len(key)/3+2
	for _, k := range known {
		if d := editdist.Distance(key, k.Name); d < bestD {
			best, bestD = k.Name, d
		}
	}
	return best
}
