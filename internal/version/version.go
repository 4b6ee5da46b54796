// Package version identifies the ycsbctl build. Agents and coordinators
// compare both values at connect time and refuse to run a benchmark
// together when either differs, because a mixed cluster would measure with
// different engines and merge incompatible data.
package version

// Version is the ycsbctl release, set at build time:
//
//	go build -ldflags "-X github.com/ycsbctl/ycsbctl/version.Version=v1.2.3"
//
// It is a variable (not a constant) only so that the linker can set it.
var Version = "dev"

// Protocol is the coordinator/agent wire protocol revision. It changes
// whenever the messages in proto/ycsbctl.proto change meaning, so that two
// builds that happen to carry the same Version string (e.g. both "dev")
// still refuse each other when their protocols differ.
const Protocol = 2
