package workload_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/workload"
	"github.com/ycsbctl/ycsbctl/workloads"
)

// nopDB is a no-op adapter without verbose output, the harness floor.
type nopDB struct{}

func (nopDB) Read(context.Context, string, []byte, []string, *adapters.Record) adapters.Status {
	return adapters.OK
}
func (nopDB) Scan(context.Context, string, []byte, int, []string, *adapters.Rows) adapters.Status {
	return adapters.OK
}
func (nopDB) Update(context.Context, string, []byte, []adapters.Field) adapters.Status {
	return adapters.OK
}
func (nopDB) Insert(context.Context, string, []byte, []adapters.Field) adapters.Status {
	return adapters.OK
}
func (nopDB) Delete(context.Context, string, []byte) adapters.Status { return adapters.OK }

func workloadProps(tb testing.TB, name string, kv ...string) *properties.Properties {
	w, ok := workloads.Lookup(name)
	if !ok {
		tb.Fatalf("no workload %s", name)
	}
	p := properties.New()
	if err := p.Load(strings.NewReader(w.Text)); err != nil {
		tb.Fatal(err)
	}
	p.SetPairs(kv...)
	return p
}

// BenchmarkTransaction measures the whole per-operation path of the run
// phase (operation choice, key choice and build, values, the call, timing
// and recording) against a no-op DB with YCSB's workload A.
func BenchmarkTransaction(b *testing.B) {
	for _, wl := range []string{"workloada", "workloadb", "workloadf"} {
		b.Run(wl, func(b *testing.B) {
			p := workloadProps(b, wl, "recordcount", "100000", "operationcount", "2000000")
			w, err := workload.New(p, clock.NewReal())
			if err != nil {
				b.Fatal(err)
			}
			b.RunParallel(func(pb *testing.PB) {
				wk := w.NewWorker(0, nopDB{}, measurement.NewRecorder(measurement.ModeOp), 1)
				ctx := context.Background()
				for pb.Next() {
					wk.DoTransaction(ctx)
				}
			})
			b.ReportAllocs()
		})
	}
}

// BenchmarkInsert measures the load-phase path.
func BenchmarkInsert(b *testing.B) {
	p := workloadProps(b, "workloada", "recordcount", "1000000000")
	w, err := workload.New(p, clock.NewReal())
	if err != nil {
		b.Fatal(err)
	}
	wk := w.NewWorker(0, nopDB{}, measurement.NewRecorder(measurement.ModeOp), 1)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		wk.DoInsert(ctx)
	}
}
