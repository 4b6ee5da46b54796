package spec

import (
	"fmt"

	"github.com/ycsbctl/ycsbctl/internal/plural"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/workload"
)

// checkRecordMemory refuses a run whose records cannot fit: every worker
// holds its record's values (workload.Footprint), so a record of
// gigabytes times a few threads grows until the kernel kills the process.
// Like the thread count, a run may use half of the memory available now;
// the message names every size so the operator sees what to lower.
func checkRecordMemory(cfg *workload.Config, threads int, phase run.Phase) error {
	f := cfg.Footprint(phase == run.Load)
	need := float64(f.Shared) + float64(threads)*f.PerWorker()
	avail := availableMemory()
	if need <= float64(avail/2) {
		return nil
	}
	each := fmt.Sprintf("%s each (%s)", plural.CountAs(f.Copies, "copy", "copies"), f.Holds)
	if f.Records > 1 {
		each = fmt.Sprintf("%s (batchsize) × %s", plural.Count(f.Records, "record"), each)
	}
	lower := "fieldlength, fieldcount or -threads"
	if f.Records > 1 {
		lower = "fieldlength, fieldcount, batchsize or -threads"
	}
	pool := ""
	if f.Shared > 0 {
		pool = fmt.Sprintf(" plus a value pool of %s", fmtBytes(float64(f.Shared)))
	}
	return &properties.Error{Property: workload.PropFieldLength, Value: fmt.Sprint(cfg.FieldLength),
		Expected: fmt.Sprintf("records that fit in memory: a record of %s (fieldcount %d × fieldlength %s) × %s × %s%s needs %s, but this host has %s available and a run may use half of it (%s); lower %s",
			fmtBytes(float64(f.Record)), cfg.FieldCount, fmtBytes(float64(cfg.FieldLength)), plural.Count(threads, "thread"), each, pool,
			fmtBytes(need), fmtBytes(float64(avail)), fmtBytes(float64(avail/2)), lower)}
}

// fmtBytes writes a size in binary units: "100 B", "1.5 KiB", "64 GiB".
func fmtBytes(n float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for n >= 1024 && i < len(units)-1 {
		n /= 1024
		i++
	}
	if i == 0 || n == float64(int64(n)) {
		return fmt.Sprintf("%.0f %s", n, units[i])
	}
	return fmt.Sprintf("%.1f %s", n, units[i])
}
