package session

import (
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/spec"
)

// stopState is how far a run has been asked to end early.
type stopState uint8

const (
	// running: nobody asked the run to end.
	running stopState = iota
	// stopping: a graceful stop (the operator's first signal or q, or a
	// closed stdout): calls in flight finish and are measured, within the
	// grace period.
	stopping
	// aborting: calls in flight are cancelled (a second signal, or the
	// grace period ran out).
	aborting
)

// stopper turns what asks a run to end early into Stop and Abort calls on
// its source: the first request stops gracefully, the next one aborts, and
// a graceful stop whose calls have not returned when the grace period runs
// out aborts them, so that no call can hold the run forever.
type stopper struct {
	src   Source
	logf  func(string, ...any)
	clk   clock.Clock
	grace time.Duration
	// done is closed when the source's Run has returned.
	done chan struct{}

	mu    sync.Mutex
	state stopState
}

// SignalName names an operator signal for run.json and the summary.
func SignalName(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}

// interrupt is the operator's request (a signal, or q in the live view):
// the first stops gracefully, the second aborts.
func (s *stopper) interrupt(how string) {
	s.mu.Lock()
	st := s.state
	s.mu.Unlock()
	if st == running {
		s.stop("interrupted by operator ("+how+")",
			fmt.Sprintf("Interrupted (%s): stopping gracefully; calls still in flight after %s are aborted (press Ctrl-C again to abort now)", how, s.grace))
		return
	}
	s.abort("aborted by operator ("+how+")", "Aborting: calls in flight are cancelled")
}

// stop asks the source to stop gracefully, once, and arms the grace period.
func (s *stopper) stop(reason, notice string) {
	s.mu.Lock()
	if s.state != running {
		s.mu.Unlock()
		return
	}
	s.state = stopping
	s.mu.Unlock()
	s.logf("%s", notice)
	s.src.Stop(reason)
	go func() {
		select {
		case <-s.clk.After(s.grace):
			s.abort(fmt.Sprintf("calls in flight did not return within %s=%s of the stop", spec.PropStopGrace, s.grace),
				fmt.Sprintf("Calls still in flight %s after the stop: aborting them (%s)", s.grace, spec.PropStopGrace))
		case <-s.done:
		}
	}()
}

// abort cancels the calls in flight, once.
func (s *stopper) abort(reason, notice string) {
	s.mu.Lock()
	if s.state == aborting {
		s.mu.Unlock()
		return
	}
	s.state = aborting
	s.mu.Unlock()
	select {
	case <-s.done:
		return
	default:
	}
	s.logf("%s", notice)
	s.src.Abort(reason)
}

func (s *stopper) get() stopState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}
