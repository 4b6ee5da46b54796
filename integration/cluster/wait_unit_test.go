//go:build cluster

package cluster

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestProgressWaitEnds checks how a wait ends, without a cluster: a mark
// that stops moving ends it as stalled (which waitNode answers with a
// restart), a mark that keeps moving only at the overall limit, which is
// not a stall.
func TestProgressWaitEnds(t *testing.T) {
	w := progressWait{what: "thing", limit: time.Minute, stall: 50 * time.Millisecond, every: 5 * time.Millisecond}
	err := w.run(func() (bool, string, error) { return false, "same", nil }, func() string { return "diag" })
	if !errors.Is(err, errStalled) || !strings.Contains(err.Error(), "last state: same") || !strings.HasSuffix(err.Error(), "diag") {
		t.Fatalf("a mark that does not move: %v", err)
	}
	n := 0
	w = progressWait{what: "thing", limit: 50 * time.Millisecond, stall: time.Minute, every: 5 * time.Millisecond}
	err = w.run(func() (bool, string, error) { n++; return false, strconv.Itoa(n), nil }, func() string { return "diag" })
	if err == nil || errors.Is(err, errStalled) || !strings.Contains(err.Error(), "not done after") {
		t.Fatalf("a mark that moves, past the limit: %v", err)
	}
	err = w.run(func() (bool, string, error) { return false, "", errUnitFailed }, func() string { return "diag" })
	if !errors.Is(err, errUnitFailed) || errors.Is(err, errStalled) {
		t.Fatalf("a failed unit: %v", err)
	}
	if err := w.run(func() (bool, string, error) { return true, "", nil }, nil); err != nil {
		t.Fatalf("done at once: %v", err)
	}
}
