package measurement_test

import (
	"io"
	"testing"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
)

// BenchmarkMeasure is the worker's hot path: one measured call.
func BenchmarkMeasure(b *testing.B) {
	r := measurement.NewRecorder(measurement.ModeOp)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		r.Measure(measurement.Read, adapters.OK, int64(1000+i%4096), 0)
	}
}

// BenchmarkMeasureRaw adds the raw sample hand-off (writer discarding).
func BenchmarkMeasureRaw(b *testing.B) {
	log := measurement.NewRawLog(io.Discard, nil, "")
	r := measurement.NewRecorder(measurement.ModeOp)
	r.KeepRaw(log)
	log.Start()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		r.Measure(measurement.Read, adapters.OK, int64(1000+i%4096), 0)
	}
	b.StopTimer()
	_ = log.Close()
	b.ReportMetric(float64(log.Dropped())/float64(b.N), "dropped/op")
}
