package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// emptyMeans says, for the flags where it is most surprising, what an
// empty value would silently do. Every string flag given as empty is
// refused (refuseEmptyFlags): it is nearly always a shell variable that was
// not set, and for most flags empty quietly means the same as leaving the
// flag out (`--results ""` wrote no bundle, `-o ""` the default file), or
// worse, switches a protection off (`agent --token ""` served without a
// token, `--tls-cert ""` without TLS). Left out, a flag keeps its default.
var emptyMeans = map[string]string{
	"results":      "no bundle would be written (leave the flag out for none)",
	"output":       "the default file would be written (leave -o out for it, or give - for stdout)",
	"token":        "no token would be required or sent (leave the flag out, or give a secret of at least 16 characters)",
	"token-file":   "no token would be required or sent (leave the flag out, or name the file that holds the secret)",
	"tls-cert":     "TLS would be off (leave the TLS flags out for none, or name the PEM file)",
	"tls-key":      "TLS would be off (leave the TLS flags out for none, or name the PEM file)",
	"tls-ca":       "TLS would be off (leave the TLS flags out for none, or name the PEM file)",
	"listen":       "the default address would be used (leave the flag out for it)",
	"metrics-addr": "no metrics would be served (leave the flag out for none)",
}

// emptyAllowed are the string flags for which empty is a value of its own:
// -l (YCSB's label) prefixes nothing.
var emptyAllowed = map[string]bool{"l": true}

// refuseEmptyFlags refuses every string flag that the command line gave
// (cobra's Changed, which tells an empty --results from none) an empty
// value, naming it; it runs before any command does anything.
func refuseEmptyFlags(cmd *cobra.Command, _ []string) error {
	var err error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if err != nil || emptyAllowed[f.Name] || !givenEmpty(f) {
			return
		}
		name := "--" + f.Name
		if f.Shorthand != "" {
			name = "-" + f.Shorthand + "/" + name
		}
		why, ok := emptyMeans[f.Name]
		if !ok {
			why = "it would mean the same as leaving the flag out"
		}
		err = invalid(fmt.Errorf("flag %s '': expected a value; given empty, %s", name, why))
	})
	return err
}

// givenEmpty reports whether a string flag (or one element of a list
// flag) was given as the empty string.
func givenEmpty(f *pflag.Flag) bool {
	switch f.Value.Type() {
	case "string":
		return f.Value.String() == ""
	case "stringSlice", "stringArray":
		sv, ok := f.Value.(pflag.SliceValue)
		if !ok {
			return false
		}
		for _, v := range sv.GetSlice() {
			if v == "" {
				return true
			}
		}
		return len(sv.GetSlice()) == 0
	}
	return false
}
