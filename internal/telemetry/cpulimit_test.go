package telemetry

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A load generator held below its host's cores is client-bound when it
// uses nearly all it may use, though its host is far from saturated; the
// host's 90 % alone would never say so on a many-core host.
func TestClientBoundByItsOwnLimit(t *testing.T) {
	iv := func(cores int, hostBusy, clientPct, clientCPUs float64) *Interval {
		return &Interval{Samples: 10, Cores: cores, CPU: CPU{User: hostBusy, Idle: 100 - hostBusy},
			Client: Process{Count: 1, CPUPct: clientPct}, ClientCPUs: clientCPUs}
	}
	tests := []struct {
		name     string
		iv       *Interval
		bound    bool
		contains []string
	}{
		// 1.92 of 16 cores is 12 % of the host: GOMAXPROCS 2 holds it.
		{name: "GOMAXPROCS 2 of 16 cores, 1.92 used", iv: iv(16, 15, 12, 2), bound: true,
			contains: []string{"may use 2 of its host's 16 cores (GOMAXPROCS or its cgroup's CPU quota)", "used ≥ 90% of them in 4 of 4", "mean 1.92 CPUs: 96% of its allowance"}},
		{name: "a cgroup quota of 1.5 CPUs on 8 cores, 1.4 used", iv: iv(8, 30, 17.5, 1.5), bound: true,
			contains: []string{"may use 1.5 of its host's 8 cores", "mean 1.4 CPUs: 93% of its allowance"}},
		{name: "GOMAXPROCS 2 of 16 cores, 1 used", iv: iv(16, 15, 6.25, 2), bound: false},
		// An agent that does not say what it may use is judged on its
		// host only, as before.
		{name: "allowance not said", iv: iv(16, 15, 12, 0), bound: false},
		{name: "allowed every core, host not saturated", iv: iv(4, 80, 75, 4), bound: false},
		{name: "allowed every core, host saturated", iv: iv(4, 95, 80, 4), bound: true,
			contains: []string{"host was CPU-saturated (≥ 90% busy) in 4 of 4"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBuilder([]string{"10.0.0.1:7420"}, []string{"h1"})
			for seq := int64(1); seq <= 4; seq++ {
				b.Add(0, seq, seq*10e9, (seq+1)*10e9, tc.iv)
			}
			r := b.Record()
			require.NotNil(t, r)
			if !tc.bound {
				assert.Empty(t, r.Verdicts)
				return
			}
			require.Len(t, r.Verdicts, 1)
			v := r.Verdicts[0]
			assert.Equal(t, ClientBound, v.Kind)
			assert.Equal(t, 4, v.Intervals)
			for _, c := range tc.contains {
				assert.Contains(t, v.Text, c)
			}
			assert.NotContains(t, v.Text, ",", "verdicts go into YCSB's comma-separated [NOTE] lines")
		})
	}
}

func TestClientCPUs(t *testing.T) {
	assert.Equal(t, 8.0, clientCPUs(8, 0), "no quota: GOMAXPROCS")
	assert.Equal(t, 1.5, clientCPUs(2, 1.5), "Go rounds a quota of 1.5 up to GOMAXPROCS 2")
	assert.Equal(t, 2.0, clientCPUs(2, 4), "GOMAXPROCS set below the quota")
	assert.Equal(t, 1.5, clientCPUs(0, 1.5), "another process: its quota")
	assert.Equal(t, 0.0, clientCPUs(0, 0))
}

// cgroupFixture lays out a /proc with pid 42's cgroup file and a /sys
// with the given files under fs/cgroup.
func cgroupFixture(t *testing.T, cgroup string, files map[string]string) (src *source, sys string) {
	t.Helper()
	dir := t.TempDir()
	proc := filepath.Join(dir, "proc")
	sys = filepath.Join(dir, "sys")
	require.NoError(t, os.MkdirAll(filepath.Join(proc, "42"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(proc, "42", "cgroup"), []byte(cgroup), 0o644))
	for name, text := range files {
		p := filepath.Join(sys, "fs", "cgroup", name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
	src, err := newSource(proc, sys, 42)
	require.NoError(t, err)
	return src, sys
}

func TestCgroupCPUQuota(t *testing.T) {
	tests := []struct {
		name   string
		cgroup string
		files  map[string]string
		want   float64
	}{
		{"v2, no limit anywhere", "0::/system.slice/ycsbctl-agent.service\n",
			map[string]string{"system.slice/ycsbctl-agent.service/cpu.max": "max 100000\n", "system.slice/cpu.max": "max 100000\n"}, 0},
		{"v2, a unit's CPUQuota=150%", "0::/system.slice/ycsbctl-agent.service\n",
			map[string]string{"system.slice/ycsbctl-agent.service/cpu.max": "150000 100000\n"}, 1.5},
		// The kernel enforces every level: a parent's smaller quota wins.
		{"v2, a parent's smaller quota", "0::/kubepods/pod1/c1\n",
			map[string]string{"kubepods/pod1/c1/cpu.max": "400000 100000\n", "kubepods/pod1/cpu.max": "200000 100000\n"}, 2},
		// In a cgroup namespace the path is / and the mount is the
		// container's own cgroup.
		{"v2, a container's namespace", "0::/\n", map[string]string{"cpu.max": "50000 100000\n"}, 0.5},
		{"v1, cpu,cpuacct", "12:cpu,cpuacct:/docker/abc\n11:memory:/docker/abc\n",
			map[string]string{"cpu,cpuacct/docker/abc/cpu.cfs_quota_us": "300000\n", "cpu,cpuacct/docker/abc/cpu.cfs_period_us": "100000\n"}, 3},
		{"v1, no quota", "4:cpu,cpuacct:/\n",
			map[string]string{"cpu,cpuacct/cpu.cfs_quota_us": "-1\n", "cpu,cpuacct/cpu.cfs_period_us": "100000\n"}, 0},
		{"no cgroup files", "0::/user.slice\n", nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src, sys := cgroupFixture(t, tc.cgroup, tc.files)
			assert.InDelta(t, tc.want, src.cgroupCPUQuota(sys, 42), 1e-12, strings.TrimSpace(tc.cgroup))
		})
	}
}
