//go:build !unix

package clock

import "time"

// kernelSleep spins where no kernel sleep finer than the Go timer is at
// hand.
func kernelSleep(d time.Duration) {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		yield()
	}
}
