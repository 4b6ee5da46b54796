package session

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/telemetry"
)

// The live verdicts hold a tally per host, not every interval: the scale
// run (scripts/scale-run.sh, 10 agents, 30 minutes) showed the
// coordinator's RSS rising by about 60 KiB a minute because the session
// kept each agent's telemetry for every interval of the run only to draw
// the summary's verdicts at the end (run.json's telemetry is rebuilt from
// the spool). 10 agents over 2,000 intervals (5.5 hours at 10 s) must not
// cost the session more than a few hundred KiB, and the verdicts must be
// those of the whole run.
func TestTelemetryNotesStayFlatOverALongRun(t *testing.T) {
	const agents, intervals = 10, 2000
	notes := newTelemetryNotes(func(string, ...any) {}, true)
	upd := func(seq int64) *run.Update {
		u := &run.Update{Interval: measurement.NewInterval(seq, seq*10e9, (seq+1)*10e9)}
		for i := range agents {
			u.Agents = append(u.Agents, run.Agent{Address: fmt.Sprintf("127.0.0.1:%d", 7420+i), Hostname: "vm"})
			busy := 50.0
			if seq%4 != 0 { // saturated in three intervals of four
				busy = 97
			}
			// A fresh interval each time, as decoded from an agent's record.
			u.Telemetry = append(u.Telemetry, &telemetry.Interval{Samples: 10, Cores: 2, MemTotal: 24 << 30,
				CPU:    telemetry.CPU{User: busy - 5, System: 5, Idle: 100 - busy},
				Disks:  []telemetry.Device{{Name: "vda", ReadBps: 1e6, UtilPct: 10}, {Name: "vdb", WriteBps: 2e6, UtilPct: 5}},
				Links:  []telemetry.Link{{Name: "lo", RxBps: 1e4, TxBps: 1e4}, {Name: "eth0", RxBps: 10, TxBps: 10}},
				Client: telemetry.Process{Count: 1, CPUPct: 3, RSSMax: 200 << 20}})
		}
		return u
	}
	notes.OnInterval(upd(0)) // the first interval sizes what the session keeps
	before := heapInUse()
	for seq := int64(1); seq < intervals; seq++ {
		notes.OnInterval(upd(seq))
	}
	grew := heapInUse() - before
	lines := notes.lines()
	runtime.KeepAlive(notes)
	assert.Less(t, grew, int64(512<<10), "the session's telemetry grew by %d KiB over %d intervals of %d agents", grew>>10, intervals, agents)
	require.Len(t, lines, agents, "one client-bound verdict per agent: %q", lines)
	for i, l := range lines {
		assert.True(t, strings.HasPrefix(l, fmt.Sprintf("Client-bound: agent %d (vm at 127.0.0.1:%d)", i, 7420+i)), l)
		assert.Contains(t, l, fmt.Sprintf("in %d of %d measured intervals (mean 97%% busy", intervals*3/4, intervals), l)
	}
}

func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
