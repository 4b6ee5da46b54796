package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/properties"
)

func newSchemaCmd(gs *GlobalState, verb string) *cobra.Command {
	f := &ycsbFlags{}
	short := "Create the benchmark's schema (keyspace/table, column family and pre-split regions, collection and sharding)"
	if verb == "drop" {
		short = "Remove the benchmark's data so the next load starts clean"
	}
	cmd := &cobra.Command{
		Use:   verb + " <db> [-P file]... [-p key=value]...",
		Short: short,
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := f.resolveNoted(gs, cmd)
			if err != nil {
				return err
			}
			info, err := adapters.Lookup(args[0])
			if err != nil {
				return invalid(err)
			}
			msg, err := applySchema(gs.Ctx, info, p, verb)
			if err != nil {
				return err
			}
			fmt.Fprintln(gs.Stdout, msg)
			return nil
		},
	}
	f.register(cmd)
	return cmd
}

// applySchema opens the adapter and creates (verb "init") or drops
// ("drop") the benchmark schema described by p; `ycsbctl init|drop` and
// a suite's load steps both go through it.
func applySchema(ctx context.Context, info *adapters.Info, p *properties.Properties, verb string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	db, err := info.Driver.Open(ctx, p)
	if err != nil {
		return "", err
	}
	defer func() {
		if c, ok := db.(adapters.Closer); ok {
			_ = c.Close()
		}
	}()
	sm, ok := db.(adapters.SchemaManager)
	if !ok {
		return fmt.Sprintf("%s has no schema to %s", info.Name, verb), nil
	}
	var msg string
	if verb == "init" {
		msg, err = sm.CreateSchema(ctx, p)
	} else {
		msg, err = sm.DropSchema(ctx, p)
	}
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", info.Name, verb, err)
	}
	return msg, nil
}
