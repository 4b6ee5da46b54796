package cli

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/properties"
)

// PropDB is YCSB's `db` property: the binding class (or, here, also an
// adapter name). Java's Client sets it from -db too.
const PropDB = "db"

// dbCommands are the commands whose first positional argument names the
// database; the value says whether the embedded store is used when none is
// named (init and drop insist on a name).
var dbCommands = map[string]bool{
	"ycsbctl load": true, "ycsbctl run": true, "ycsbctl shell": true,
	"ycsbctl init": false, "ycsbctl drop": false,
	"ycsbctl coordinator load": true, "ycsbctl coordinator run": true,
}

// DefaultDBNotice is the line said first when a command names no database
// and the embedded store is used; where says where its data lives.
func DefaultDBNotice(where string) string {
	return fmt.Sprintf("No database named (positional db, -db or the db property): using %s, ycsbctl's default", where)
}

// javaPhaseArgs applies Java YCSB Client's phase switches: `-load` means
// the load phase and `-t` the transaction (run) phase. Without a command
// they become it (`ycsbctl -load -db CLASS -P w`); with the same command
// they are dropped; with another command they are a usage error.
func javaPhaseArgs(args []string) ([]string, error) {
	var phase, flag string
	out := make([]string, 0, len(args))
	for _, a := range args {
		if a == "--" {
			break
		}
		switch a {
		case "-load", "--load":
			if phase == "run" {
				return nil, errors.New("flags -load and -t: expected one phase, got both")
			}
			phase, flag = "load", "-load"
			continue
		case "-t":
			if phase == "load" {
				return nil, errors.New("flags -load and -t: expected one phase, got both")
			}
			phase, flag = "run", "-t"
			continue
		}
		out = append(out, a)
	}
	if len(out) < len(args) && args[len(out)] == "--" {
		out = append(out, args[len(out):]...)
	}
	if phase == "" {
		return args, nil
	}
	if len(out) > 0 && !strings.HasPrefix(out[0], "-") {
		switch out[0] {
		case phase:
			return out, nil
		case "load", "run":
			return nil, fmt.Errorf("flag %s (the %s phase) contradicts the command %q", flag, phase, out[0])
		case "coordinator":
			if len(out) > 1 && out[1] != phase {
				return nil, fmt.Errorf("flag %s (the %s phase) contradicts the command %q", flag, phase, "coordinator "+out[1])
			}
			return out, nil
		default:
			return nil, fmt.Errorf("flag %s: expected with load, run or no command, not with %q", flag, out[0])
		}
	}
	return append([]string{phase}, out...), nil
}

// selectDB finds the database a command line names, the way YCSB's Java
// Client takes it (positional name, -db CLASS, db=CLASS in -p or a -P
// file) plus ycsbctl's positional adapter name, and rewrites the command
// line so that the command sees it as its positional argument. Names,
// aliases and YCSB class names all resolve through the adapter registry.
// Several sources must name the same adapter; an unknown name is a usage
// error listing the known ones. notice is DefaultDBNotice when a command
// that defaults to the embedded store names nothing. Command lines that do
// not parse are returned unchanged for cobra to report.
func selectDB(gs *GlobalState, args []string) (out []string, notice string, err error) {
	probe := newRootCmd(gs)
	cmd, rest, ferr := probe.Find(args)
	if ferr != nil || cmd == nil {
		return args, "", nil
	}
	usesDefault, ok := dbCommands[cmd.CommandPath()]
	if !ok {
		return args, "", nil
	}
	if cmd.ParseFlags(rest) != nil {
		return args, "", nil
	}
	if h, _ := cmd.Flags().GetBool("help"); h {
		return args, "", nil
	}
	type source struct{ what, value string }
	var named []source
	pos := cmd.Flags().Args()
	if len(pos) > 1 {
		// Said before anything else: the run would otherwise be
		// announced against a default database it never uses.
		quoted := make([]string, len(pos))
		for i, a := range pos {
			quoted[i] = strconv.Quote(a)
		}
		return nil, "", fmt.Errorf("%s: expected at most one positional argument, the database; got %d: %s",
			cmd.CommandPath(), len(pos), properties.Printable(strings.Join(quoted, " ")))
	}
	if len(pos) == 1 {
		named = append(named, source{"argument", pos[0]})
	}
	if v, _ := cmd.Flags().GetString("db"); cmd.Flags().Changed("db") {
		if strings.TrimSpace(v) == "" {
			return nil, "", errors.New("flag -db: expected an adapter name or a YCSB binding class, got nothing")
		}
		named = append(named, source{"-db", v})
	}
	if v, where := dbProperty(gs, cmd); v != "" {
		named = append(named, source{where, v})
	}
	if len(named) == 0 {
		if usesDefault {
			return args, DefaultDBNotice(whereDefault(gs, cmd)), nil
		}
		return args, "", nil
	}
	first, err := adapters.Lookup(strings.TrimSpace(named[0].value))
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", named[0].what, err)
	}
	for _, s := range named[1:] {
		info, err := adapters.Lookup(strings.TrimSpace(s.value))
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", s.what, err)
		}
		if info.Name != first.Name {
			return nil, "", fmt.Errorf("%s %q (adapter %s) and %s %q (adapter %s) name different databases; give one",
				named[0].what, named[0].value, first.Name, s.what, s.value, info.Name)
		}
	}
	if len(pos) == 0 {
		// The command takes its db as the positional argument.
		out = append(append([]string(nil), args...), first.Name)
		return out, "", nil
	}
	return args, "", nil
}

// dbProperty returns the db property as the command will see it and where
// it came from.
func dbProperty(gs *GlobalState, cmd *cobra.Command) (string, string) {
	p, from := commandLineProperties(gs, cmd)
	return strings.TrimSpace(p.String(PropDB, "")), from[PropDB]
}

// whereDefault says where the default database keeps its data, as the
// command line configures it.
func whereDefault(gs *GlobalState, cmd *cobra.Command) string {
	info, err := adapters.Lookup(DefaultDB)
	if err != nil || info.Where == nil {
		return "the " + DefaultDB + " store"
	}
	p, _ := commandLineProperties(gs, cmd)
	return info.Where(p)
}

// commandLineProperties merges the -P files and -p overrides as the
// command will (-p beats -P files, later ones beat earlier ones); from
// says where each property came from. Files that cannot be read are
// skipped here: the command reports them.
func commandLineProperties(gs *GlobalState, cmd *cobra.Command) (*properties.Properties, map[string]string) {
	p, from := properties.New(), map[string]string{}
	files, _ := cmd.Flags().GetStringArray("P")
	for _, name := range files {
		text, _, err := readWorkload(gs, name)
		if err != nil {
			continue
		}
		fp := properties.New()
		if fp.Load(bytes.NewReader(text)) != nil {
			continue
		}
		for _, k := range fp.Keys() {
			v, _ := fp.Lookup(k)
			p.Set(k, v)
			from[k] = fmt.Sprintf("property %s (-P %s)", k, name)
		}
	}
	for _, o := range typedValues(cmd, "p") {
		if k, v, err := properties.ParseOverride(o); err == nil {
			p.Set(k, v)
			from[k] = "property " + k + " (-p)"
		}
	}
	return p, from
}
