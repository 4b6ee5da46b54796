package clock

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// kernelTimer is a timerfd read through the runtime's poller: the
// goroutine parks until the kernel's high-resolution timer fires.
type kernelTimer struct {
	f   *os.File
	fd  int
	buf [8]byte // the expiration count read back
}

func newKernelTimer() (*kernelTimer, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	// Non-blocking, so os.File reads it through the poller.
	return &kernelTimer{f: os.NewFile(uintptr(fd), "timerfd"), fd: fd}, nil
}

func (k *kernelTimer) sleep(d time.Duration) error {
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	if err := unix.TimerfdSettime(k.fd, 0, &spec, nil); err != nil {
		return err
	}
	_, err := k.f.Read(k.buf[:])
	return err
}

func (k *kernelTimer) close() error { return k.f.Close() }
