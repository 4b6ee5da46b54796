package suite

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/exitcode"
)

// TestSuiteOutcomeIsItsExitCode: however a suite ends, the code it exits
// with is the one suite.json records, with the status that goes with it,
// and the operator's signals mean what they mean for a single run: the
// first stops (6), a second aborts (4). One signal once exited 4.
func TestSuiteOutcomeIsItsExitCode(t *testing.T) {
	const src = "name: s\ndatabases: [basic]\nsteps:\n  - run: workloada\n    operations: 10\n  - pause: 1h\n  - run: workloadc\n    operations: 10\n"
	type signal func(r *Runner)
	stop, abort := (*Runner).Stop, func(r *Runner) { r.Stop(); r.Abort() }
	cases := []struct {
		name string
		// step is the first run's exit code; during, the signals sent
		// while it runs; atPause, those sent when the pause starts;
		// after, those sent once every step passed.
		step             exitcode.Code
		during, atPause  signal
		after            signal
		keepGoing        bool
		code             exitcode.Code
		status           string
		firstStep, pause string
	}{
		{name: "every step passes", code: exitcode.OK, status: SuiteComplete, firstStep: StatusPassed, pause: StatusPassed},
		{name: "a signal after the last step", after: stop, code: exitcode.OK, status: SuiteComplete, firstStep: StatusPassed, pause: StatusPassed},
		{name: "one signal stops the step", step: exitcode.Stopped, during: stop, code: exitcode.Stopped, status: SuiteStopped, firstStep: StatusIncomplete, pause: StatusPending},
		{name: "the step's stop grace ran out", step: exitcode.Aborted, during: stop, code: exitcode.Aborted, status: SuiteAborted, firstStep: StatusIncomplete, pause: StatusPending},
		{name: "two signals abort the step", step: exitcode.Aborted, during: abort, code: exitcode.Aborted, status: SuiteAborted, firstStep: StatusIncomplete, pause: StatusPending},
		{name: "q in the step's live view", step: exitcode.Stopped, code: exitcode.Stopped, status: SuiteStopped, firstStep: StatusIncomplete, pause: StatusPending},
		{name: "one signal in a pause", atPause: stop, code: exitcode.Stopped, status: SuiteStopped, firstStep: StatusPassed, pause: StatusIncomplete},
		{name: "two signals in a pause", atPause: abort, code: exitcode.Aborted, status: SuiteAborted, firstStep: StatusPassed, pause: StatusIncomplete},
		{name: "database errors", step: exitcode.DBErrors, code: exitcode.DBErrors, status: SuiteFailed, firstStep: StatusFailed, pause: StatusPending},
		{name: "database errors, keep going", step: exitcode.DBErrors, keepGoing: true, code: exitcode.DBErrors, status: SuiteFailed, firstStep: StatusFailed, pause: StatusPassed},
		{name: "an agent lost", step: exitcode.AgentLost, code: exitcode.AgentLost, status: SuiteFailed, firstStep: StatusFailed, pause: StatusPending},
		{name: "keep going, then stopped", step: exitcode.DBErrors, keepGoing: true, atPause: stop, code: exitcode.Stopped, status: SuiteStopped, firstStep: StatusFailed, pause: StatusIncomplete},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			p := mustPlan(t, src, dir)
			var r *Runner
			ex := &fakeExec{fail: func(it *Item) exitcode.Code {
				if it.Workload != "workloada" {
					return exitcode.OK
				}
				if c.during != nil {
					c.during(r)
				}
				return c.step
			}}
			r = &Runner{Plan: p, Exec: ex, Clock: clock.NewReal(), KeepGoing: c.keepGoing, Progress: func(pr Progress) {
				switch {
				case pr.Kind == KindPause && pr.Event == "start" && c.atPause != nil:
					c.atPause(r)
				case pr.Index == pr.Total && pr.Event == "done" && c.after != nil:
					c.after(r)
				}
			}}
			if c.atPause == nil {
				p.Items[1].Pause = 0 // no hour's wait; with a signal, only it ends the pause
			}
			st, code := r.Run(context.Background())
			assert.Equal(t, c.code, code)
			saved, err := ReadState(dir)
			require.NoError(t, err)
			for _, s := range []*State{st, saved} {
				require.NotNil(t, s.ExitCode)
				assert.Equal(t, int(code), *s.ExitCode, "suite.json's exit code is the suite's")
				assert.Equal(t, code.String(), s.ExitReason)
				assert.Equal(t, c.status, s.Status)
				assert.Equal(t, code.ByOperator(), s.Interrupted)
				assert.Equal(t, c.firstStep, s.Steps[0].Status)
				assert.Equal(t, c.pause, s.Steps[1].Status)
			}
		})
	}
}
