package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ycsbctl/ycsbctl/adapters"
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
			ctx, cancel := context.WithTimeout(gs.Ctx, 5*time.Minute)
			defer cancel()
			db, err := info.Driver.Open(ctx, p)
			if err != nil {
				return err
			}
			defer func() {
				if c, ok := db.(adapters.Closer); ok {
					_ = c.Close()
				}
			}()
			sm, ok := db.(adapters.SchemaManager)
			if !ok {
				fmt.Fprintf(gs.Stdout, "%s has no schema to %s\n", info.Name, verb)
				return nil
			}
			var msg string
			if verb == "init" {
				msg, err = sm.CreateSchema(ctx, p)
			} else {
				msg, err = sm.DropSchema(ctx, p)
			}
			if err != nil {
				return fmt.Errorf("%s %s: %w", info.Name, verb, err)
			}
			fmt.Fprintln(gs.Stdout, msg)
			return nil
		},
	}
	f.register(cmd)
	return cmd
}
