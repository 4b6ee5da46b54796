package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/spec"
	"github.com/ycsbctl/ycsbctl/internal/workload"
	"github.com/ycsbctl/ycsbctl/workloads"
)

func newWorkloadsCmd(gs *GlobalState) *cobra.Command {
	return &cobra.Command{
		Use:   "workloads",
		Short: "List the built-in workloads usable with -P",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, w := range workloads.List() {
				fmt.Fprintf(gs.Stdout, "%-31s %s\n", w.Name, w.Description)
			}
			return nil
		},
	}
}

func newDBsCmd(gs *GlobalState) *cobra.Command {
	return &cobra.Command{
		Use:   "dbs",
		Short: "List the database adapters, the YCSB classes they stand in for, their properties and how they differ from YCSB",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			seen := map[string]bool{}
			for _, n := range adapters.Names() {
				info, _ := adapters.Lookup(n)
				if seen[info.Name] {
					continue
				}
				seen[info.Name] = true
				printDB(gs, info)
			}
			return nil
		},
	}
}

// printDB prints one adapter: name and aliases, the YCSB classes it maps,
// every declared property with its default, then the differences from
// YCSB's binding.
func printDB(gs *GlobalState, info *adapters.Info) {
	name := info.Name
	if len(info.Aliases) > 0 {
		name += " (" + strings.Join(info.Aliases, ", ") + ")"
	}
	if info.Name == DefaultDB {
		name += " [default]"
	}
	fmt.Fprintf(gs.Stdout, "%s: %s\n", name, info.Description)
	if len(info.Classes) > 0 {
		fmt.Fprintf(gs.Stdout, "  YCSB classes: %s\n", strings.Join(info.Classes, ", "))
	}
	if len(info.Properties) > 0 {
		fmt.Fprintf(gs.Stdout, "  Properties (name, default, meaning):\n")
	}
	for _, k := range info.Properties {
		printKnownRow(gs, k)
	}
	if len(info.Differences) > 0 {
		fmt.Fprintf(gs.Stdout, "  Differs from YCSB:\n")
	}
	for _, d := range info.Differences {
		fmt.Fprintf(gs.Stdout, "    - %s\n", d)
	}
}

// newPropertiesCmd lists every property ycsbctl knows, with its default:
// the client's, the core workload's, and one adapter's (or every adapter's).
func newPropertiesCmd(gs *GlobalState) *cobra.Command {
	return &cobra.Command{
		Use:   "properties [db]",
		Short: "List the properties ycsbctl reads, with their defaults: client, core workload and adapters",
		Args:  usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			printKnown(gs, "Client, measurements and output", spec.Known())
			printKnown(gs, "Core workload (site.ycsb.workloads.CoreWorkload)", workload.Known())
			if len(args) == 1 {
				info, err := adapters.Lookup(args[0])
				if err != nil {
					return invalid(err)
				}
				printDB(gs, info)
				return nil
			}
			seen := map[string]bool{}
			for _, n := range adapters.Names() {
				info, _ := adapters.Lookup(n)
				if !seen[info.Name] {
					seen[info.Name] = true
					printDB(gs, info)
				}
			}
			return nil
		},
	}
}

func printKnown(gs *GlobalState, title string, list []properties.Known) {
	fmt.Fprintf(gs.Stdout, "%s:\n", title)
	for _, k := range list {
		printKnownRow(gs, k)
	}
}

// printKnownRow prints one property: name, default, meaning.
func printKnownRow(gs *GlobalState, k properties.Known) {
	n := k.Name
	if k.Prefix {
		n += "*"
	}
	def := k.Default
	if def == "" {
		def = "-"
	} else if len(def) > 40 {
		def = def[:37] + "..."
	}
	fmt.Fprintf(gs.Stdout, "    %-36s %-22s %s\n", n, def, k.Help)
}
