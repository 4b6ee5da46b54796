package measurement_test

import (
	"io"
	"testing"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
)

// BenchmarkMeasureRaw is BenchmarkTransaction with the raw sample
// hand-off (writer discarding).
func BenchmarkMeasureRaw(b *testing.B) {
	log := measurement.NewRawLog(io.Discard, nil, "")
	r := measurement.NewRecorder(measurement.ModeOp)
	r.KeepRaw(log)
	log.Start()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		r.Measure(measurement.Read, adapters.OK, int64(1000+i%4096), 0)
		r.Done(1)
	}
	b.StopTimer()
	_ = log.Close()
	b.ReportMetric(float64(log.Dropped())/float64(b.N), "dropped/op")
}

// BenchmarkTransaction is one transaction of one call, as a worker runs
// it: the call's measurement, then the transaction's count.
func BenchmarkTransaction(b *testing.B) {
	r := measurement.NewRecorder(measurement.ModeOp)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		r.Measure(measurement.Read, adapters.OK, int64(1000+i%4096), 0)
		r.Done(1)
	}
}

// BenchmarkTransactionRMW is a read-modify-write: three measurements, one
// transaction.
func BenchmarkTransactionRMW(b *testing.B) {
	r := measurement.NewRecorder(measurement.ModeOp)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		v := int64(1000 + i%4096)
		r.Measure(measurement.Read, adapters.OK, v, 0)
		r.Measure(measurement.Update, adapters.OK, v, 0)
		r.MeasureLatency(measurement.ReadModifyWrite, 2*v, 2*v)
		r.Done(1)
	}
}
