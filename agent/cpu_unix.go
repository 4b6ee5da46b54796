//go:build unix

package agent

import "syscall"

// cpuSeconds returns the user+system CPU time this process has used. The
// coordinator reports it per interval so that an overloaded load
// generator (whose latencies would include its own queueing) is visible.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}
