package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// emptyMeans are the flags whose value names where a command writes, with
// what an empty value would silently do: the same as leaving the flag out
// (`--results ""` wrote no bundle, `-o ""` the default file), which is
// rarely what was meant (a shell variable that was not set). Given as
// empty, they are refused; left out, they keep their default.
var emptyMeans = map[string]string{
	"results": "no bundle would be written (leave the flag out for none)",
	"output":  "the default file would be written (leave -o out for it, or give - for stdout)",
}

// refuseEmptyFlags refuses each flag of emptyMeans that the command line
// gave (cobra's Changed, which tells an empty --results from none) an
// empty value, naming it; it runs before any command does anything.
func refuseEmptyFlags(cmd *cobra.Command, _ []string) error {
	var err error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		why, ok := emptyMeans[f.Name]
		if !ok || err != nil || f.Value.String() != "" {
			return
		}
		name := "--" + f.Name
		if f.Shorthand != "" {
			name = "-" + f.Shorthand + "/" + name
		}
		err = invalid(fmt.Errorf("flag %s '': expected a path; given empty, %s", name, why))
	})
	return err
}
