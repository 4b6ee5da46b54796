package cli

import (
	"bufio"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ycsbctl/ycsbctl/adapters"
)

func newShellCmd(gs *GlobalState) *cobra.Command {
	f := &ycsbFlags{}
	cmd := &cobra.Command{
		Use:   "shell [db] [-P file]... [-p key=value]...",
		Short: "Interactive YCSB shell: read, scan, insert, update, delete, table",
		Args:  usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := DefaultDB
			if len(args) == 1 {
				name = args[0]
			}
			p, err := f.resolveNoted(gs, cmd)
			if err != nil {
				return err
			}
			info, err := adapters.Lookup(name)
			if err != nil {
				return invalid(err)
			}
			db, err := info.Driver.Open(gs.Ctx, p)
			if err != nil {
				return err
			}
			defer func() {
				if c, ok := db.(adapters.Closer); ok {
					_ = c.Close()
				}
			}()
			sh := &shell{gs: gs, db: db, table: p.String("table", "usertable")}
			return sh.loop()
		},
	}
	f.register(cmd)
	return cmd
}

type shell struct {
	gs    *GlobalState
	db    adapters.DB
	table string
}

const shellHelp = `Commands:
  read key [field1 field2 ...] - Read a record
  scan key recordcount [field1 field2 ...] - Scan starting at key
  insert key name1=value1 [name2=value2 ...] - Insert a new record
  update key name1=value1 [name2=value2 ...] - Update a record
  delete key - Delete a record
  table [tablename] - Get or [set] the name of the table
  quit - Quit`

func (s *shell) loop() error {
	out := s.gs.Stdout
	fmt.Fprintln(out, "YCSB Command Line client")
	fmt.Fprintln(out, "Type \"help\" for command line help")
	fmt.Fprintf(out, "Connected.\n> ")
	sc := bufio.NewScanner(s.gs.Stdin)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		words := strings.Fields(sc.Text())
		if len(words) > 0 {
			if words[0] == "quit" || words[0] == "exit" {
				return nil
			}
			s.exec(words)
		}
		fmt.Fprint(out, "> ")
	}
	fmt.Fprintln(out)
	return sc.Err()
}

func (s *shell) exec(w []string) {
	out := s.gs.Stdout
	ctx, cancel := context.WithTimeout(s.gs.Ctx, 60*time.Second)
	defer cancel()
	start := time.Now()
	var st adapters.Status
	switch w[0] {
	case "help":
		fmt.Fprintln(out, shellHelp)
		return
	case "table":
		if len(w) == 1 {
			fmt.Fprintf(out, "Using table \"%s\"\n", s.table)
		} else {
			s.table = w[1]
			fmt.Fprintf(out, "Using table \"%s\"\n", s.table)
		}
		return
	case "read":
		if len(w) < 2 {
			fmt.Fprintln(out, "Error: syntax is \"read keyname [field1 field2 ...]\"")
			return
		}
		var fields []string
		if len(w) > 2 {
			fields = w[2:]
		}
		var rec adapters.Record
		st = s.db.Read(ctx, s.table, []byte(w[1]), fields, &rec)
		fmt.Fprintf(out, "Return code: %s\n", st)
		for _, f := range rec.Fields {
			fmt.Fprintf(out, "%s=%s\n", f.Name, f.Value)
		}
	case "scan":
		if len(w) < 3 {
			fmt.Fprintln(out, "Error: syntax is \"scan keyname scanlength [field1 field2 ...]\"")
			return
		}
		n, err := strconv.Atoi(w[2])
		if err != nil || n < 1 {
			fmt.Fprintln(out, "Error: scanlength must be a positive integer")
			return
		}
		var fields []string
		if len(w) > 3 {
			fields = w[3:]
		}
		var rows adapters.Rows
		st = s.db.Scan(ctx, s.table, []byte(w[1]), n, fields, &rows)
		fmt.Fprintf(out, "Result: %s\n", st)
		for i := 0; i < rows.N; i++ {
			fmt.Fprintf(out, "Record %d\n", i)
			fmt.Fprintf(out, "  key=%s\n", rows.Keys[i])
			for _, f := range rows.Records[i].Fields {
				fmt.Fprintf(out, "  %s=%s\n", f.Name, f.Value)
			}
		}
		if rows.N == 0 {
			fmt.Fprintln(out, "0 records")
		}
	case "insert", "update":
		if len(w) < 3 {
			fmt.Fprintf(out, "Error: syntax is \"%s keyname name1=value1 [name2=value2 ...]\"\n", w[0])
			return
		}
		var values []adapters.Field
		for _, kv := range w[2:] {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				fmt.Fprintf(out, "Error: %q is not name=value\n", kv)
				return
			}
			values = append(values, adapters.Field{Name: k, Value: []byte(v)})
		}
		if w[0] == "insert" {
			st = s.db.Insert(ctx, s.table, []byte(w[1]), values)
		} else {
			st = s.db.Update(ctx, s.table, []byte(w[1]), values)
		}
		fmt.Fprintf(out, "Result: %s\n", st)
	case "delete":
		if len(w) != 2 {
			fmt.Fprintln(out, "Error: syntax is \"delete keyname\"")
			return
		}
		st = s.db.Delete(ctx, s.table, []byte(w[1]))
		fmt.Fprintf(out, "Return result: %s\n", st)
	default:
		fmt.Fprintf(out, "Error: unknown command %q\n", w[0])
		return
	}
	fmt.Fprintf(out, "%d ms\n", time.Since(start).Milliseconds())
}
