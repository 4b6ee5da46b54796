// Package fuzzbound bounds what one fuzz input may cost: a hang is a
// failure, not a stalled fuzzer. Go's fuzzer has no per-input timeout; a
// worker that never returns only stalls the run until -fuzztime ends.
package fuzzbound

import (
	"fmt"
	"os"
	"time"
)

// Limit is how long one input may take. Inputs are capped in size by
// each target, so every parser here is well under a millisecond on them.
const Limit = 10 * time.Second

// Start arms a watchdog for one input and returns its disarm. When the
// input takes longer than Limit the process exits with the input quoted:
// the fuzzer keeps the input it was running as a failure (testdata/fuzz),
// which then fails as a regular test as long as the hang lasts.
func Start(input any) (stop func()) {
	t := time.AfterFunc(Limit, func() {
		fmt.Fprintf(os.Stderr, "fuzz input took longer than %s: %q\n", Limit, input)
		os.Exit(3)
	})
	return func() { t.Stop() }
}
