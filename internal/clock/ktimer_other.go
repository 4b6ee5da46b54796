//go:build !linux

package clock

import (
	"errors"
	"time"
)

// kernelTimer exists on Linux only; elsewhere Sleepers use Go's timer.
type kernelTimer struct{}

func newKernelTimer() (*kernelTimer, error) { return nil, errors.New("no kernel timer on this system") }

func (*kernelTimer) sleep(time.Duration) error { return errors.New("no kernel timer") }

func (*kernelTimer) close() error { return nil }
