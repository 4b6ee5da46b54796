package telemetry

import (
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The load generator's CPU is measured as a share of all the host's
// cores, but it may be allowed far fewer: GOMAXPROCS, or a cgroup CPU
// quota (a container, a systemd CPUQuota=). Held to 2 of 16 cores and
// using both, it is the bottleneck while its host reads 13 % busy; the
// client-bound verdict therefore judges it against what it may use.

// clientCPUs is how many CPUs the load generator may use: the least of
// its GOMAXPROCS (0: not known here) and its cgroup's quota (0: none).
// Go sets GOMAXPROCS from the quota by default, but rounds it up (1.5
// CPUs run as 2), and a GOMAXPROCS environment variable overrides it
// either way, so both are taken.
func clientCPUs(gomaxprocs int, quota float64) float64 {
	lim := float64(gomaxprocs)
	if quota > 0 && (lim == 0 || quota < lim) {
		lim = quota
	}
	return lim
}

// cgroupCPUQuota reads the CPU quota of process pid's cgroup in CPUs (0:
// none found): the smallest quota of the cgroup and its ancestors, as the
// kernel enforces every level. proc and sys are the file systems' roots
// (/proc, /sys). The cgroup's path comes from procfs; the limit files
// (cgroup v2's cpu.max, v1's cpu.cfs_quota_us and cpu.cfs_period_us) are
// one or two numbers each, which procfs does not read.
func (s *source) cgroupCPUQuota(sys string, pid int) float64 {
	p, err := s.fs.Proc(pid)
	if err != nil {
		return 0
	}
	groups, err := p.Cgroups()
	if err != nil {
		return 0
	}
	root := filepath.Join(sys, "fs", "cgroup")
	least := 0.0
	take := func(q float64) {
		if q > 0 && (least == 0 || q < least) {
			least = q
		}
	}
	for _, g := range groups {
		switch {
		case g.HierarchyID == 0:
			for _, dir := range ancestors(g.Path) {
				take(cpuMax(filepath.Join(root, dir, "cpu.max")))
			}
		case slices.Contains(g.Controllers, "cpu"):
			// v1 mounts the cpu controller alone or with cpuacct.
			for _, mount := range []string{"cpu", "cpu,cpuacct", "cpuacct,cpu"} {
				for _, dir := range ancestors(g.Path) {
					d := filepath.Join(root, mount, dir)
					take(cfsQuota(filepath.Join(d, "cpu.cfs_quota_us"), filepath.Join(d, "cpu.cfs_period_us")))
				}
			}
		}
	}
	return least
}

// ancestors lists a cgroup path and every parent up to the root ("/a/b":
// "/a/b", "/a", "/"). In a cgroup namespace the path is "/" and the
// mounted root is the process's own cgroup.
func ancestors(p string) []string {
	p = path.Clean("/" + p)
	out := []string{p}
	for p != "/" {
		p = path.Dir(p)
		out = append(out, p)
	}
	return out
}

// cpuMax reads cgroup v2's "QUOTA PERIOD" ("max PERIOD": no limit).
func cpuMax(file string) float64 {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) != 2 || f[0] == "max" {
		return 0
	}
	return ratio(f[0], f[1])
}

// cfsQuota reads cgroup v1's quota and period (a quota of -1: no limit).
func cfsQuota(quotaFile, periodFile string) float64 {
	q, err1 := os.ReadFile(quotaFile)
	p, err2 := os.ReadFile(periodFile)
	if err1 != nil || err2 != nil {
		return 0
	}
	return ratio(strings.TrimSpace(string(q)), strings.TrimSpace(string(p)))
}

func ratio(quota, period string) float64 {
	q, err1 := strconv.ParseInt(quota, 10, 64)
	p, err2 := strconv.ParseInt(period, 10, 64)
	if err1 != nil || err2 != nil || q <= 0 || p <= 0 {
		return 0
	}
	return float64(q) / float64(p)
}
