package cassandra

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/ycsbctl/ycsbctl/internal/plural"
	"github.com/ycsbctl/ycsbctl/internal/properties"
)

// schemaTimeout bounds each DDL statement when the caller set no deadline.
// DDL waits for schema agreement across the cluster, which can take far
// longer than a data operation.
const schemaTimeout = 2 * time.Minute

// dcRE accepts data-center names as Cassandra's snitches produce them.
var dcRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

type schemaSpec struct {
	keyspace    string
	table       string
	fields      []string
	replication string // CQL map literal
	replDesc    string // human-readable form
	compression string // class, or "none"
	compaction  string // class
}

// Table options accepted by init: the classes Cassandra 5 ships.
var (
	compressions = []string{"LZ4Compressor", "SnappyCompressor", "DeflateCompressor", "ZstdCompressor", "none"}
	compactions  = []string{"SizeTieredCompactionStrategy", "LeveledCompactionStrategy", "TimeWindowCompactionStrategy", "UnifiedCompactionStrategy"}
)

// tableOptions is the WITH clause of CREATE TABLE.
func (s *schemaSpec) tableOptions() string {
	comp := "{'class': '" + s.compression + "'}"
	if s.compression == "none" {
		comp = "{'enabled': 'false'}"
	}
	return " WITH compression = " + comp + " AND compaction = {'class': '" + s.compaction + "'}"
}

// schemaFrom reads the schema properties; keyspace and table fall back to
// the ones this DB was opened with.
func (d *DB) schemaFrom(p *properties.Properties) (*schemaSpec, error) {
	s := &schemaSpec{
		keyspace: p.String(propKeyspace, d.keyspace),
		table:    p.String(propTable, d.table),
	}
	if !identRE.MatchString(s.keyspace) {
		return nil, &properties.Error{Property: propKeyspace, Value: s.keyspace, Expected: "an unquoted CQL identifier"}
	}
	if !identRE.MatchString(s.table) {
		return nil, &properties.Error{Property: propTable, Value: s.table, Expected: "an unquoted CQL identifier"}
	}
	n, err := p.PositiveInt64(propFieldCount, 10)
	if err != nil {
		return nil, err
	}
	if n > 1000 {
		return nil, &properties.Error{Property: propFieldCount, Value: strconv.FormatInt(n, 10), Expected: "at most 1000 fields"}
	}
	prefix := p.String(propFieldPrefix, "field")
	if !identRE.MatchString(prefix + "0") {
		return nil, &properties.Error{Property: propFieldPrefix, Value: prefix, Expected: "a prefix that makes unquoted CQL identifiers"}
	}
	for i := int64(0); i < n; i++ {
		s.fields = append(s.fields, prefix+strconv.FormatInt(i, 10))
	}
	if s.compression, err = p.OneOf(propCompression, "LZ4Compressor", compressions...); err != nil {
		return nil, err
	}
	if s.compaction, err = p.OneOf(propCompaction, "SizeTieredCompactionStrategy", compactions...); err != nil {
		return nil, err
	}
	class, err := p.OneOf(propReplClass, "SimpleStrategy", "SimpleStrategy", "NetworkTopologyStrategy")
	if err != nil {
		return nil, err
	}
	rf, err := p.PositiveInt64(propReplFactor, 1)
	if err != nil {
		return nil, err
	}
	dcs := p.String(propReplDCs, "")
	switch {
	case class == "SimpleStrategy":
		if dcs != "" {
			return nil, &properties.Error{Property: propReplDCs, Value: dcs, Expected: "no value unless cassandra.replication.class=NetworkTopologyStrategy"}
		}
		s.replication = fmt.Sprintf("{'class': 'SimpleStrategy', 'replication_factor': %d}", rf)
		s.replDesc = fmt.Sprintf("SimpleStrategy, replication_factor %d", rf)
	case dcs == "":
		// Cassandra >= 4 expands replication_factor to every data center.
		s.replication = fmt.Sprintf("{'class': 'NetworkTopologyStrategy', 'replication_factor': %d}", rf)
		s.replDesc = fmt.Sprintf("NetworkTopologyStrategy, %s in every data center", plural.Count(rf, "replica"))
	default:
		var parts, desc []string
		for _, e := range strings.Split(dcs, ",") {
			e = strings.TrimSpace(e)
			name, num, ok := strings.Cut(e, ":")
			name = strings.TrimSpace(name)
			n, err := strconv.Atoi(strings.TrimSpace(num))
			if !ok || !dcRE.MatchString(name) || err != nil || n < 0 {
				return nil, &properties.Error{Property: propReplDCs, Value: dcs, Expected: "a comma list of datacenter:replicas, e.g. dc1:3,dc2:3"}
			}
			parts = append(parts, fmt.Sprintf("'%s': %d", name, n))
			desc = append(desc, fmt.Sprintf("%s:%d", name, n))
		}
		s.replication = "{'class': 'NetworkTopologyStrategy', " + strings.Join(parts, ", ") + "}"
		s.replDesc = "NetworkTopologyStrategy, " + strings.Join(desc, ",")
	}
	return s, nil
}

func (d *DB) schemaCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, schemaTimeout)
}

// exists runs a system_schema lookup that returns a row when the object
// exists. Names are stored lowercase for unquoted identifiers.
func (d *DB) exists(ctx context.Context, cql string, args ...interface{}) (bool, error) {
	iter := d.session.Query(cql, args...).Consistency(gocql.One).IterContext(ctx)
	found := iter.Scan(nil)
	if err := iter.Close(); err != nil {
		return false, err
	}
	return found, nil
}

func (d *DB) keyspaceExists(ctx context.Context, ks string) (bool, error) {
	return d.exists(ctx, "SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = ?", strings.ToLower(ks))
}

func (d *DB) tableExists(ctx context.Context, ks, table string) (bool, error) {
	return d.exists(ctx, "SELECT table_name FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?",
		strings.ToLower(ks), strings.ToLower(table))
}

// CreateSchema implements adapters.SchemaManager: CREATE KEYSPACE and
// CREATE TABLE, both IF NOT EXISTS, and says which of them already existed.
// An existing keyspace or table is left as it is (its replication or columns
// are not changed).
func (d *DB) CreateSchema(ctx context.Context, p *properties.Properties) (string, error) {
	s, err := d.schemaFrom(p)
	if err != nil {
		return "", err
	}
	ctx, cancel := d.schemaCtx(ctx)
	defer cancel()
	var done []string

	ksExists, err := d.keyspaceExists(ctx, s.keyspace)
	if err != nil {
		return "", fmt.Errorf("cassandra: checking keyspace %s: %w", s.keyspace, err)
	}
	if ksExists {
		done = append(done, fmt.Sprintf("keyspace %s already exists", s.keyspace))
	} else {
		q := "CREATE KEYSPACE IF NOT EXISTS " + s.keyspace + " WITH replication = " + s.replication
		if err := d.ddl(ctx, q); err != nil {
			return "", fmt.Errorf("cassandra: creating keyspace %s: %w", s.keyspace, err)
		}
		done = append(done, fmt.Sprintf("created keyspace %s (%s)", s.keyspace, s.replDesc))
	}

	tExists, err := d.tableExists(ctx, s.keyspace, s.table)
	if err != nil {
		return "", fmt.Errorf("cassandra: checking table %s.%s: %w", s.keyspace, s.table, err)
	}
	if tExists {
		done = append(done, fmt.Sprintf("table %s.%s already exists", s.keyspace, s.table))
	} else {
		var b strings.Builder
		b.WriteString("CREATE TABLE IF NOT EXISTS " + s.keyspace + "." + s.table + " (" + keyColumn + " varchar PRIMARY KEY")
		for _, f := range s.fields {
			b.WriteString(", " + f + " varchar")
		}
		b.WriteString(")" + s.tableOptions())
		if err := d.ddl(ctx, b.String()); err != nil {
			return "", fmt.Errorf("cassandra: creating table %s.%s: %w", s.keyspace, s.table, err)
		}
		done = append(done, fmt.Sprintf("created table %s.%s (%s varchar PRIMARY KEY, %s..%s varchar; compression %s, compaction %s)",
			s.keyspace, s.table, keyColumn, s.fields[0], s.fields[len(s.fields)-1], s.compression, s.compaction))
	}
	return strings.Join(done, "; "), nil
}

// ddl runs an idempotent schema statement (every one here says IF [NOT]
// EXISTS). A DDL waits for schema agreement and, for a drop, a snapshot,
// which on a loaded machine can outlast the per-request timeout (gocql
// has no per-query timeout); as repeating the statement is harmless, a
// client-side timeout is retried until ctx ends.
func (d *DB) ddl(ctx context.Context, cql string) error {
	for {
		err := d.session.Query(cql).Consistency(gocql.One).ExecContext(ctx)
		if err == nil || !errors.Is(err, gocql.ErrTimeoutNoResponse) || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Second):
		}
	}
}

// DropSchema implements adapters.SchemaManager. By default it drops only
// the table: the keyspace may hold other data and carries replication
// settings an operator chose; cassandra.drop=keyspace removes it all.
func (d *DB) DropSchema(ctx context.Context, p *properties.Properties) (string, error) {
	s, err := d.schemaFrom(p)
	if err != nil {
		return "", err
	}
	what, err := p.OneOf(propDrop, "table", "table", "keyspace")
	if err != nil {
		return "", err
	}
	ctx, cancel := d.schemaCtx(ctx)
	defer cancel()
	if what == "keyspace" {
		ok, err := d.keyspaceExists(ctx, s.keyspace)
		if err != nil {
			return "", fmt.Errorf("cassandra: checking keyspace %s: %w", s.keyspace, err)
		}
		if !ok {
			return fmt.Sprintf("keyspace %s does not exist", s.keyspace), nil
		}
		if err := d.ddl(ctx, "DROP KEYSPACE IF EXISTS "+s.keyspace); err != nil {
			return "", fmt.Errorf("cassandra: dropping keyspace %s: %w", s.keyspace, err)
		}
		return fmt.Sprintf("dropped keyspace %s", s.keyspace), nil
	}
	ok, err := d.tableExists(ctx, s.keyspace, s.table)
	if err != nil {
		return "", fmt.Errorf("cassandra: checking table %s.%s: %w", s.keyspace, s.table, err)
	}
	if !ok {
		return fmt.Sprintf("table %s.%s does not exist", s.keyspace, s.table), nil
	}
	if err := d.ddl(ctx, "DROP TABLE IF EXISTS "+s.keyspace+"."+s.table); err != nil {
		return "", fmt.Errorf("cassandra: dropping table %s.%s: %w", s.keyspace, s.table, err)
	}
	return fmt.Sprintf("dropped table %s.%s (keyspace %s kept; cassandra.drop=keyspace drops it)", s.keyspace, s.table, s.keyspace), nil
}

// countPageSize is the number of keys per page when counting.
const countPageSize = 10000

// CountRecords implements adapters.RecordCounter exactly by paging through
// every partition key. SELECT COUNT(*) runs as one server-side request that
// times out (range_request_timeout, 10 s) on large tables; client-side
// paging makes each page its own bounded request, so the count scales and
// stays exact. The caller's ctx bounds the whole count.
func (d *DB) CountRecords(ctx context.Context, table string) (int64, error) {
	if !identRE.MatchString(table) {
		return 0, &properties.Error{Property: propTable, Value: table, Expected: "an unquoted CQL identifier"}
	}
	iter := d.session.Query("SELECT " + keyColumn + " FROM " + d.qualified(table)).
		Consistency(d.readCL).Idempotent(true).PageSize(countPageSize).IterContext(ctx)
	var n int64
	for iter.Scan(nil) {
		n++
	}
	if err := iter.Close(); err != nil {
		return 0, fmt.Errorf("cassandra: counting %s.%s: %w", d.keyspace, table, err)
	}
	return n, nil
}
