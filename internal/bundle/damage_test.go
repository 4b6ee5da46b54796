package bundle

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/spool"
	"github.com/ycsbctl/ycsbctl/internal/wire"
)

// A run that ends normally with a spool damaged under it (a disk
// error): the bundle holds the other intervals, its status reasons say
// what was dropped beside the run's own, and the spool is kept.
func TestBuildWithEndingKeepsADamagedSpool(t *testing.T) {
	dir := t.TempDir()
	h, err := json.Marshal(&Run{RunID: "r", Mode: run.ModeSingleHost, Agents: []Agent{{Address: "local"}}})
	if err != nil {
		t.Fatal(err)
	}
	path := spool.Path(dir, "r")
	w, err := spool.Create(path, h)
	if err != nil {
		t.Fatal(err)
	}
	last := 0
	for seq := int64(1); seq <= 3; seq++ {
		iv := measurement.NewInterval(seq, seq*1e9, (seq+1)*1e9)
		hist := measurement.NewHistogram()
		_ = hist.RecordValues(1000, 10)
		iv.Hist[measurement.SeriesOf(measurement.Read, measurement.Service, false)] = hist
		iv.Returns[measurement.Read][adapters.OK], iv.Ops = 10, 10
		rec, err := wire.RecordFromInterval(0, iv)
		if err != nil {
			t.Fatal(err)
		}
		last = 8 + proto.Size(rec)
		if err := w.Add(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	b[len(b)-last-3] ^= 0xff // inside the second record
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := Build(dir, path, &Ending{Status: run.StatusComplete, Reasons: []string{"the run's own"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Intervals) != 2 || r.SpoolDamage == nil || len(r.SpoolDamage.Dropped) != 1 {
		t.Fatalf("intervals %d, damage %+v", len(r.Intervals), r.SpoolDamage)
	}
	reasons := strings.Join(r.StatusReasons, "\n")
	if !strings.HasPrefix(reasons, "the run's own\n") || !strings.Contains(reasons, "dropped bytes") || !strings.Contains(reasons, ".spool-r.damaged") {
		t.Fatalf("status reasons: %s", reasons)
	}
	if _, err := os.Stat(path + spool.DamagedSuffix); err != nil {
		t.Fatalf("the damaged spool is not kept: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, FileRunJSON)); err != nil {
		t.Fatal(err)
	}
}
