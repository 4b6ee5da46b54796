//go:build unix

package clock

import (
	"syscall"
	"time"
)

// kernelSleep sleeps in the kernel, holding the calling OS thread.
func kernelSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil)
}
