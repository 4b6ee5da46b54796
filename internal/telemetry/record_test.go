package telemetry

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func hostIv(busy, iowait, util, client float64) *Interval {
	return &Interval{Samples: 10, Cores: 2, CPU: CPU{User: busy, IOWait: iowait, Idle: 100 - busy - iowait}, BusyMax: busy, IOWaitMax: iowait,
		MemTotal: 8 << 30, Disks: []Device{{Name: "vda", UtilPct: util, UtilPctMax: util, WriteBps: 1e6}},
		Client: Process{Count: 1, CPUPct: client, CPUPctMax: client, RSSMax: 50 << 20}, DB: Process{Count: 1, CPUPct: busy - client, WriteBytes: 10e6, RSSMax: 1 << 30}}
}

// A saturated client host in half the intervals is client-bound; a busy
// disk in a third is a disk-bound hint; one hot interval of many is
// neither.
func TestVerdicts(t *testing.T) {
	b := NewBuilder([]string{"10.0.0.1:7420", "10.0.0.2:7420", "10.0.0.3:7420"}, []string{"h1", "h2", "h3"})
	feedVerdictCases(b)
	r := b.Record()
	require.NotNil(t, r)
	require.Len(t, r.Hosts, 3)
	require.Len(t, r.Verdicts, 2, "%v", r.Verdicts)
	assert.Equal(t, ClientBound, r.Verdicts[0].Kind)
	assert.Equal(t, 0, r.Verdicts[0].Agent)
	assert.Equal(t, 3, r.Verdicts[0].Intervals)
	assert.Equal(t, 6, r.Verdicts[0].Of)
	assert.Contains(t, r.Verdicts[0].Text, "agent 0 (h1 at 10.0.0.1:7420)")
	assert.Equal(t, DiskBound, r.Verdicts[1].Kind)
	assert.Equal(t, 1, r.Verdicts[1].Agent)
	assert.Contains(t, r.Verdicts[1].Text, "disk vda up to 85% utilised")
	for _, v := range r.Verdicts {
		assert.NotContains(t, v.Text, ",", "verdicts go into YCSB's comma-separated [NOTE] lines")
	}
	lines := r.Lines()
	assert.True(t, strings.HasPrefix(lines[0], "Client-bound: "))

	h0 := r.Hosts[0].Summary
	assert.Equal(t, 6, h0.Intervals)
	assert.InDelta(t, (50+95)/2.0, h0.CPUBusyPct, 1e-9)
	assert.InDelta(t, 95, h0.CPUBusyMax, 1e-9)
	assert.InDelta(t, 30.0/72.5, h0.ClientShare, 1e-9)
	assert.Equal(t, int64(60e6), h0.DBWriteBytes)
	assert.Equal(t, 2, r.Hosts[0].Cores)
	assert.Equal(t, []string{"telemetry: no database server process on h3"}, r.Hosts[2].Notes, "an interval without samples still carries its notes")
	assert.Len(t, r.Hosts[2].Intervals, 6)

	assert.Nil(t, NewBuilder([]string{"local"}, nil).Record(), "no telemetry, no section")

	// The live session's builder keeps no interval and says the same.
	live := NewVerdictBuilder()
	for i, h := range []string{"h1", "h2", "h3"} {
		live.Name(i, "10.0.0."+string(rune('1'+i))+":7420", h)
	}
	feedVerdictCases(live)
	assert.Equal(t, lines, live.Lines())
	for _, h := range live.hosts {
		assert.Empty(t, h.Intervals, "a verdict builder keeps no interval")
	}
}

func feedVerdictCases(b *Builder) {
	for seq := int64(1); seq <= 6; seq++ {
		busy := 50.0
		if seq%2 == 0 {
			busy = 95
		}
		b.Add(0, seq, seq*10e9, (seq+1)*10e9, hostIv(busy, 0, 5, 30))
		util := 10.0
		if seq <= 2 {
			util = 85
		}
		b.Add(1, seq, seq*10e9, (seq+1)*10e9, hostIv(40, 3, util, 5))
		hot := 30.0
		if seq == 6 {
			hot = 99
		}
		b.Add(2, seq, seq*10e9, (seq+1)*10e9, hostIv(hot, 1, 1, 10))
	}
	b.Add(2, 7, 0, 0, &Interval{Samples: 0, Notes: []string{"telemetry: no database server process on h3"}})
}

func TestRawFile(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewRawWriter(&buf)
	require.NoError(t, err)
	pts := []Point{{UnixNs: 2e9, CPU: CPU{User: 10, Idle: 90}, DBRSS: 5, ClientCPUPct: 1.5}, {UnixNs: 3e9}}
	require.NoError(t, w.Add(1, "h2", 1e9, pts))
	require.NoError(t, w.Flush())
	assert.Equal(t, 2, w.Rows())
	rows, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 3)
	assert.Equal(t, rawHeader, rows[0])
	assert.Equal(t, []string{"1", "h2", "1000000000", "10", "0", "0", "0", "90"}, rows[1][:8], "times move to the run's clock")
	assert.Equal(t, "5", rows[1][16])
	assert.Equal(t, "1.5", rows[1][18])
}

// TestRecordLeavesUnreadOut: what was not read is absent, never 0. A host
// with notes and no reading has no cores, memory or summary in run.json;
// a host whose database was never found has DBIntervals 0 (DBRead false);
// a database read in some intervals only (it exited) is averaged over
// those, not diluted by the intervals without it.
func TestRecordLeavesUnreadOut(t *testing.T) {
	b := NewBuilder([]string{"a0", "a1", "a2"}, []string{"h0", "h1", "h2"})
	b.Add(0, 1, 0, 1e9, &Interval{Notes: []string{"too short"}})
	noDB := hostIv(50, 1, 10, 5)
	noDB.DB = Process{}
	b.Add(1, 1, 0, 1e9, noDB)
	for seq := int64(1); seq <= 4; seq++ {
		iv := hostIv(50, 1, 10, 5)
		if seq > 2 {
			iv.DB = Process{} // exited after interval 2
		}
		b.Add(2, seq, (seq-1)*1e9, seq*1e9, iv)
	}
	r := b.Record()
	require.Len(t, r.Hosts, 3)
	unread, found, exited := r.Hosts[0], r.Hosts[1], r.Hosts[2]
	assert.False(t, unread.Measured())
	assert.Nil(t, unread.Summary)
	js, err := json.Marshal(unread)
	require.NoError(t, err)
	for _, k := range []string{`"cores"`, `"mem_total_bytes"`, `"summary"`} {
		assert.NotContains(t, string(js), k)
	}
	require.NotNil(t, found.Summary)
	assert.False(t, found.Summary.DBRead())
	assert.Zero(t, found.Summary.DBIntervals)
	assert.Positive(t, found.Cores)
	require.NotNil(t, exited.Summary)
	assert.True(t, exited.Summary.DBRead())
	assert.Equal(t, 2, exited.Summary.DBIntervals)
	assert.InDelta(t, 45, exited.Summary.DBCPUPct, 1e-9, "the mean over the intervals the database was there")
	var none *HostSummary
	assert.False(t, none.DBRead())
}
