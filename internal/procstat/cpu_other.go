//go:build !unix

package procstat

// CPUSeconds is not measured on this platform; process_cpu_seconds_total
// from the process collector still is where client_golang supports it.
func CPUSeconds() float64 { return 0 }
