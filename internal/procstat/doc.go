// Package procstat reads this process' own resource use. A load generator
// short of CPU queues its own work and inflates the latencies it reports,
// so agents, single hosts and metrics all expose the CPU they used next to
// what they measured, through this one reader.
package procstat
