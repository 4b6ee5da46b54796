package cli

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/sink/metrics"
	"github.com/ycsbctl/ycsbctl/internal/spec"
)

// propertyFlag is a long flag that sets a property (the properties live
// in package spec). Each flag only sets its property, so
// `-p ycsbctl.tui=false` in a workload file works as well as --no-tui.
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
	{name: "no-tui", property: spec.PropTUI, boolValue: "false", usage: "print plain YCSB status lines instead of the live terminal view (" + spec.PropTUI + "=false)"},
	{name: "metrics-addr", property: spec.PropMetricsAddr, usage: "serve Prometheus metrics at http://ADDR/metrics; a bare port binds 127.0.0.1 (" + spec.PropMetricsAddr + ")",
		check: func(v string) error { _, err := metrics.NormalizeAddr(v); return err }},
	{name: "results", property: spec.PropResults, usage: "write a run bundle (run.json, summary.txt, merged.hlog) to this directory, which must not hold one already (" + spec.PropResults + ")"},
	{name: "overwrite", property: spec.PropOverwrite, boolValue: "true", usage: "replace the bundle already in --results DIR (its run.json, summary, logs, spool and reports are removed before the run) (" + spec.PropOverwrite + "=true)"},
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
