package cli

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/workloads"
)

func newWorkloadsCmd(gs *GlobalState) *cobra.Command {
	return &cobra.Command{
		Use:   "workloads",
		Short: "List the built-in workloads usable with -P",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, w := range workloads.List() {
				fmt.Fprintf(gs.Stdout, "%-26s %s\n", w.Name, w.Description)
			}
			return nil
		},
	}
}

func newDBsCmd(gs *GlobalState) *cobra.Command {
	return &cobra.Command{
		Use:   "dbs",
		Short: "List the database bindings and their properties",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			seen := map[string]bool{}
			for _, n := range adapters.Names() {
				info, _ := adapters.Lookup(n)
				if seen[info.Name] {
					continue
				}
				seen[info.Name] = true
				name := info.Name
				if len(info.Aliases) > 0 {
					name += " (" + strings.Join(info.Aliases, ", ") + ")"
				}
				fmt.Fprintf(gs.Stdout, "%s: %s\n", name, info.Description)
				var keys []string
				for k := range info.Properties {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				for _, k := range keys {
					fmt.Fprintf(gs.Stdout, "    %-36s %s\n", k, info.Properties[k])
				}
			}
			return nil
		},
	}
}
