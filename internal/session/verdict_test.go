package session

import (
	"bytes"
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/ycsbctl/ycsbctl/adapters/basic"
	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/spec"
)

// lateStop is a source whose run has just measured its whole length when
// the operator's signal arrives: Run waits for the stop, then says the run
// is complete, as the engine does when its time limit and the stop meet.
type lateStop struct{ stopped chan struct{} }

func (s *lateStop) Info() run.Info {
	return run.Info{RunID: "late", Mode: run.ModeSingleHost, Threads: 1}
}
func (s *lateStop) Run(context.Context, run.Sink, *bundle.Recorder) *run.Outcome {
	<-s.stopped
	return &run.Outcome{RunTime: time.Second, Total: measurement.NewInterval(0, 0, int64(time.Second)), Status: run.StatusComplete}
}
func (s *lateStop) Stop(string)          { close(s.stopped) }
func (s *lateStop) Abort(string)         {}
func (s *lateStop) End(e *bundle.Ending) {}

// TestStopAsTheRunEndsIsNotAStop: a SIGTERM that lands as a run reaches
// its end asks for a stop that shortens nothing: the source says the run
// is complete, so the exit code is 0 as its status says, with a note that
// the signal came as it ended. It used to be 6 (stopped) beside run.json's
// status complete (the randomized operator test's seed 2555).
func TestStopAsTheRunEndsIsNotAStop(t *testing.T) {
	sp, err := spec.Parse("basic", properties.FromMap(map[string]string{"basicdb.verbose": "false", "operationcount": "1"}), run.Run)
	require.NoError(t, err)
	var stderr, stdout bytes.Buffer
	var sigs chan<- os.Signal
	registered := make(chan struct{})
	s := New(Options{Spec: sp, Stdout: &stdout, Stderr: &stderr,
		Notify:     func(c chan<- os.Signal, _ ...os.Signal) { sigs = c; close(registered) },
		StopNotify: func(chan<- os.Signal) {}})
	src := &lateStop{stopped: make(chan struct{})}
	go func() {
		<-registered
		sigs <- syscall.SIGTERM
	}()
	err = s.Run(context.Background(), src)
	assert.NoError(t, err, stderr.String())
	assert.Equal(t, exitcode.OK, exitcode.Of(err))
	assert.True(t, strings.Contains(stdout.String()+stderr.String(), "arrived as the run ended"), "said:\n%s\n%s", stderr.String(), stdout.String())
}
