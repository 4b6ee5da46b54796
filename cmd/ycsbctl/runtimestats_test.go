package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestWriteRuntimeStats checks that every counter is written as a
// "name number" line and that the allocation counter is live.
func TestWriteRuntimeStats(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stats.txt")
	if err := writeRuntimeStats(path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		name, val, ok := strings.Cut(line, " ")
		if !ok {
			t.Fatalf("line %q is not \"name value\"", line)
		}
		v, err := strconv.ParseFloat(val, 64)
		if err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		got[name] = v
	}
	for _, n := range runtimeStatNames {
		if _, ok := got[n]; !ok {
			t.Errorf("%s missing from %q", n, b)
		}
	}
	if got["/gc/heap/allocs:objects"] <= 0 || got["/sched/gomaxprocs:threads"] < 1 {
		t.Errorf("implausible counters: %v", got)
	}
	if err := writeRuntimeStats(filepath.Join(t.TempDir(), "no", "such", "dir")); err == nil {
		t.Error("no error for an unwritable path")
	}
}
