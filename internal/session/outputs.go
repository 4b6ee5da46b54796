package session

import (
	"fmt"

	"github.com/ycsbctl/ycsbctl/internal/resultsdir"
	"github.com/ycsbctl/ycsbctl/internal/spec"
)

// checkOutputs refuses the files the run is told to write that would
// replace part of a bundle's record (its own included) or land in a
// directory another live process owns.
func (s *Session) checkOutputs() error {
	sp := s.o.Spec
	var own []string
	if sp.Output.ResultsDir != "" {
		own = append(own, sp.Output.ResultsDir)
	}
	for _, o := range []struct{ prop, path string }{
		{spec.PropExportFile, sp.Output.ExportFile},
		{spec.PropHdrOutputPath, sp.Output.HlogPath},
		{spec.PropRawOutputFile, sp.Measure.RawFile},
		// The per-operation logs' names end in .hdr, never a record's:
		// only where they go is checked.
		{spec.PropHdrOutputPath, perOpSample(sp.Measure.HdrLogPrefix)},
	} {
		if err := resultsdir.CheckOutput(fmt.Sprintf("property %q:", o.prop), o.path, own...); err != nil {
			return err
		}
	}
	return nil
}

// perOpSample is a file the per-operation HdrHistogram logs of prefix
// would write, "" when there are none.
func perOpSample(prefix string) string {
	if prefix == "" {
		return ""
	}
	return prefix + "READ.hdr"
}
