package cli

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/sink/metrics"
)

// Properties behind the operator-facing flags of load and run. Each flag
// only sets its property, so `-p ycsbctl.tui=false` in a workload file
// works as well as --no-tui.
const (
	// PropTUI turns the live terminal view off (false); it is only ever
	// on when stdout is a terminal.
	PropTUI = "ycsbctl.tui"
	// PropMetricsAddr serves Prometheus metrics on this address.
	PropMetricsAddr = "ycsbctl.metrics.addr"
	// PropMetricsLinger keeps /metrics up this many seconds after the
	// run, so the last interval is scraped before the process exits.
	PropMetricsLinger = "ycsbctl.metrics.linger"
	// PropResults writes a run bundle (run.json, summary.txt,
	// merged.hlog) to this directory.
	PropResults = "ycsbctl.results"
)

// propertyFlag is a long flag that sets a property.
type propertyFlag struct {
	name, property, usage string
	// boolValue, when set, makes a boolean flag that sets the property
	// to this value.
	boolValue string
	check     func(string) error
}

// annotation marks the flags added here, so applyPropertyFlags never
// mistakes another command's flag of the same name for one of ours.
const propFlagAnnotation = "ycsbctl-property"

var propertyFlags = []propertyFlag{
	{name: "no-tui", property: PropTUI, boolValue: "false", usage: "print plain YCSB status lines instead of the live terminal view (" + PropTUI + "=false)"},
	{name: "metrics-addr", property: PropMetricsAddr, usage: "serve Prometheus metrics at http://ADDR/metrics; a bare port binds 127.0.0.1 (" + PropMetricsAddr + ")",
		check: func(v string) error { _, err := metrics.NormalizeAddr(v); return err }},
	{name: "results", property: PropResults, usage: "write a run bundle (run.json, summary.txt, merged.hlog) to this directory (" + PropResults + ")"},
}

// addPropertyFlags adds the property flags to a command. Flags the
// command already has are left alone.
func addPropertyFlags(cmd *cobra.Command) {
	fl := cmd.Flags()
	for _, pf := range propertyFlags {
		if fl.Lookup(pf.name) != nil {
			continue
		}
		if pf.boolValue != "" {
			fl.Bool(pf.name, false, pf.usage)
		} else {
			fl.String(pf.name, "", pf.usage)
		}
		_ = fl.SetAnnotation(pf.name, propFlagAnnotation, []string{pf.property})
	}
}

// applyPropertyFlags copies the property flags given on the command line
// into the command-line properties.
func applyPropertyFlags(cmd *cobra.Command, cl *properties.Properties) error {
	fl := cmd.Flags()
	for _, pf := range propertyFlags {
		f := fl.Lookup(pf.name)
		if f == nil || !f.Changed || f.Annotations[propFlagAnnotation] == nil {
			continue
		}
		v := f.Value.String()
		if pf.boolValue != "" {
			on, err := strconv.ParseBool(v)
			if err != nil || !on {
				continue
			}
			v = pf.boolValue
		}
		if pf.check != nil {
			if err := pf.check(v); err != nil {
				return invalid(fmt.Errorf("flag --%s: %w", pf.name, err))
			}
		}
		cl.Set(pf.property, v)
	}
	return nil
}

// newRunID names a run: sortable by time, unique without coordination
// (the coordinator's format).
func newRunID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}
