package main_test

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestSignalsAfterTheRecordKeepItsExitCode: once a run's bundle is written,
// the operator's signals no longer change how the process ends. A SIGTERM
// while /metrics lingers ends the wait (it used to be ignored for the whole
// linger) and the exit code stays run.json's; a burst of SIGTERMs, some of
// which land after the session stopped listening, is ignored too (one
// landing there took the default action, exit 143, where run.json said 0
// or 6: the randomized operator test saw it on a coordinator stopped
// twice).
func TestSignalsAfterTheRecordKeepItsExitCode(t *testing.T) {
	for _, burst := range []int{1, 40} {
		dir := t.TempDir()
		res := filepath.Join(dir, "r")
		p := startProc(t, dir, "run", "basic", "-P", "workloada", "-p", "basicdb.verbose=false", "-p", "operationcount=100", "-target", "500",
			"--metrics-addr", "127.0.0.1:0", "-p", "ycsbctl.metrics.linger=600", "--results", res)
		p.waitLines(t, `^Keeping http://\S+ up for 10m0s`, 1, 60*time.Second)
		for i := 0; i < burst; i++ {
			p.signal(syscall.SIGTERM)
			time.Sleep(time.Millisecond)
		}
		// Far within the 600 s linger.
		code := p.wait(t, 60*time.Second)
		r := readRun(t, res)
		assert.Equal(t, r.ExitCode, code, "burst of %d: the exit code is run.json's\n%s", burst, p.stderr())
		assert.Equal(t, 0, code, "burst of %d: the run completed before the signals", burst)
		assert.Contains(t, p.stderr(), "SIGTERM: no longer keeping", "the linger was ended by the signal")
	}
}
