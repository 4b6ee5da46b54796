//go:build !amd64

package clock

func rdtsc() int64 { return 0 }

const haveTSC = false
