//go:build unix

package procstat

import "syscall"

// CPUSeconds returns the user+system CPU time this process has used.
// A load generator short of CPU queues its own work and inflates the
// latencies it reports, so the harness exposes its CPU next to them.
func CPUSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}
