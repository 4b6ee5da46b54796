package workload_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/workload"
	"github.com/ycsbctl/ycsbctl/workloads"
)

// FuzzWorkloadFile reads any bytes as a workload file and parses its
// CoreWorkload configuration. Invariants: a refusal is a
// properties.Error naming a property (what the operator sees as "property
// X: expected Y", exit 2); parsing is deterministic; and an accepted
// configuration small enough to build quickly builds a workload whose
// workers insert and run transactions without panicking.
func FuzzWorkloadFile(f *testing.F) {
	for _, w := range workloads.List() {
		f.Add([]byte(w.Text), uint8(20))
	}
	f.Add([]byte("recordcount=10\nrequestdistribution=latest\ninsertproportion=1\nreadproportion=0\n"), uint8(50))
	f.Add([]byte("recordcount=5\ninsertstart=3\ninsertcount=2\nrequestdistribution=exponential\n"), uint8(50))
	f.Add([]byte("recordcount=3\nscanproportion=1\nmaxscanlength=10\nscanlengthdistribution=zipfian\ndataintegrity=true\n"), uint8(30))
	f.Add([]byte("fieldlengthdistribution=zipfian\nminfieldlength=5\nfieldlength=5\nrecordcount=100\nhotspotdatafraction=0\n"), uint8(30))
	f.Fuzz(func(t *testing.T, text []byte, ops uint8) {
		if len(text) > 16<<10 {
			return
		}
		p := properties.New()
		if _, err := p.LoadText(text); err != nil {
			return
		}
		start := time.Now()
		cfg, err := workload.ParseConfig(p)
		if err != nil {
			var pe *properties.Error
			if !errors.As(err, &pe) || pe.Property == "" {
				t.Fatalf("refused without naming a property: %v (%T)", err, err)
			}
			return
		}
		again, err := workload.ParseConfig(p)
		if err != nil || !reflect.DeepEqual(cfg, again) {
			t.Fatalf("parsed twice: %+v then %+v (%v)", cfg, again, err)
		}
		if cfg.RecordCount > 1e5 || int64(cfg.FieldCount)*cfg.FieldLength > 1<<20 || cfg.MaxScanLength > 1e4 ||
			cfg.FieldLengthDist == "histogram" || cfg.InsertRetryLimit > 0 {
			return // large, or reading a file, or sleeping between retries
		}
		w, err := workload.NewFromConfig(cfg, clock.NewReal())
		if err != nil {
			return
		}
		wk := w.NewWorker(0, nopDB{}, measurement.NewRecorder(measurement.ModeOp), 1)
		ctx := context.Background()
		for i := 0; i < int(ops%64); i++ {
			if i%2 == 0 {
				wk.DoInsert(ctx)
			} else {
				wk.DoTransaction(ctx)
			}
		}
		wk.FlushBatch(ctx)
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("%+v took %s", cfg, d)
		}
	})
}
