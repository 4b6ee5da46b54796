package agent

import (
	"testing"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/clock"
)

// A word from the coordinator renews the lease while it runs, never once
// it has run out: an agent paused longer than its lease reads the
// heartbeats queued meanwhile only after the pause, and must not take
// them for a live lease (it used to, when its stream reader ran before
// watchLease, and kept its load going).
func TestTouchDoesNotRenewAnExpiredLease(t *testing.T) {
	clk := clock.NewReal()
	r := &heldRun{srv: &server{cfg: Config{Lease: time.Second}}, clk: clk}
	r.touch()
	if r.lastHeard.Load() == 0 {
		t.Fatal("the first word starts the lease")
	}

	within := clk.Nanotime() - int64(500*time.Millisecond)
	r.lastHeard.Store(within)
	r.touch()
	if r.lastHeard.Load() == within {
		t.Fatal("a word within the lease renews it")
	}

	expired := clk.Nanotime() - int64(1500*time.Millisecond)
	r.lastHeard.Store(expired)
	r.touch()
	if got := r.lastHeard.Load(); got != expired {
		t.Fatalf("a word read after the lease ran out renewed it (%s ago, lease 1s)", time.Duration(clk.Nanotime()-got))
	}
}
