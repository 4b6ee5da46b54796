//go:build unix

package cli

import "golang.org/x/sys/unix"

// outputClosed reports whether stdout or stderr is a pipe or socket whose
// reader has gone: poll says so (POLLERR, POLLHUP) without writing.
func outputClosed() bool {
	fds := []unix.PollFd{{Fd: 1, Events: unix.POLLOUT}, {Fd: 2, Events: unix.POLLOUT}}
	if _, err := unix.Poll(fds, 0); err != nil {
		return false
	}
	for _, f := range fds {
		if f.Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
			return true
		}
	}
	return false
}
