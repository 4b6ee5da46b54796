package report

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/telemetry"
)

// A run shorter than one 1 s reading has telemetry hosts with notes but
// no interval: the report says so and keeps the notes, and neither the
// report nor the comparison draws a host chart or a row of zeros for it
// (the suite's compare.html had an empty "busiest host's CPU" chart,
// which the browser check counts as a defect).
func TestHostsWithoutReadings(t *testing.T) {
	root := t.TempDir()
	var runs []*Run
	for i, db := range []string{"basic", "mongodb"} {
		r, err := Load(makeBundle(t, filepath.Join(root, db), fixture{db: db, workload: "workloada", intervals: 3, rate: 900, latencyUs: 250, seed: uint64(30 + i)}))
		if err != nil {
			t.Fatal(err)
		}
		r.B.Run.Telemetry = &telemetry.Record{Hosts: []telemetry.Host{{Agent: 0, Address: "local", Hostname: "h1",
			Notes: []string{"telemetry on h1: the basic adapter names no server process"}}}}
		runs = append(runs, r)
	}
	var buf bytes.Buffer
	if err := WriteHTML(&buf, runs[0], Options{Now: time.Unix(1_790_000_000, 0)}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{"Hosts: where the time went", "the basic adapter names no server process", "no host figures", noReading} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	for _, bad := range []string{`id="host0-cpu"`, "Busiest host:", `<table class="hosts">`} {
		if strings.Contains(page, bad) {
			t.Errorf("report draws figures of a host without readings: %q", bad)
		}
	}
	buf.Reset()
	if err := NewComparison(runs).WriteHTML(&buf, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{`id="compare-host-cpu"`, "Hosts per scenario and database"} {
		if strings.Contains(buf.String(), bad) {
			t.Errorf("comparison shows hosts without readings: %q", bad)
		}
	}
}
