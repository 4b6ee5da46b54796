//go:build integration

// Package integration runs ycsbctl against real database servers started
// on 127.0.0.1 by servers.sh. Each database's tests call startServer, which
// starts that server on first use (so `-run Cassandra` starts only
// Cassandra) and leaves it running for the tests after it; a test stops it
// with stopServer only when it needs it down (an outage test, a script
// that starts its own), and the next startServer starts a fresh one.
// TestMain stops whatever is still running at the end and prints every
// start and stop with its duration: a start costs tens of seconds, and the
// tests once stopped each JVM server after using it, so that Cassandra and
// HBase were started five times each.
//
// YCSBCTL_SKIP_<DB>=1 (e.g. YCSBCTL_SKIP_CASSANDRA=1) skips a database's
// tests; without it, a server that fails to start fails the test.
package integration

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/testutil/tools"
)

// serverStartTimeout bounds servers.sh start: a cold start downloads jars
// (about a minute) and the JVM servers need up to a few minutes on a loaded
// 2-core machine.
const serverStartTimeout = 8 * time.Minute

type serverState struct {
	endpoint string
	err      error
	started  bool
	took     time.Duration
}

var (
	serversMu sync.Mutex
	servers   = map[string]*serverState{}
	// serverLog is every start and stop this binary ran, in order.
	serverLog serverEvents
)

func TestMain(m *testing.M) {
	code := m.Run()
	serversMu.Lock()
	for db, st := range servers {
		if st.started {
			r := runServers("stop", db, time.Minute)
			serverLog.add("TestMain", "stop", db, r)
			if r.err != nil {
				fmt.Fprintf(os.Stderr, "integration: stopping %s: %v\n%s", db, r.err, r.stdout)
			}
		}
	}
	// Last, so that a CI log kept by its tail shows it.
	serverLog.print(os.Stderr)
	serversMu.Unlock()
	os.Exit(code)
}

// serversScript is the absolute path of integration/servers.sh (go test
// runs in the package directory).
func serversScript() string {
	p, err := filepath.Abs("servers.sh")
	if err != nil {
		return "servers.sh"
	}
	return p
}

// scriptRun is what one servers.sh invocation did.
type scriptRun struct {
	stdout, stderr string
	took           time.Duration
	err            error
}

// retries are the lines in which a server script says it retried a start
// and why: a retry that hides a failure (HBase's first start on every
// fresh clone once failed, and its retry passed) must show in the test
// output and in TestMain's account.
func (r scriptRun) retries() []string {
	var out []string
	for _, l := range strings.Split(r.stderr, "\n") {
		if strings.Contains(l, ": RETRY: ") {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}

// runServers runs `servers.sh <action> <db>`; the endpoint is its stdout.
// stderr (progress and log tails) is appended to the error on failure and
// echoed to the test binary's stderr so slow starts are visible with -v.
func runServers(action, db string, timeout time.Duration) scriptRun {
	return runServersEnv(nil, action, db, timeout)
}

// runServersEnv is runServers with env added to the environment, e.g. a
// YCSBCTL_SERVERS_DIR of its own.
func runServersEnv(env []string, action, db string, timeout time.Duration) scriptRun {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", serversScript(), action, db)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	// The server runs detached with its own stdio, so Wait returns when
	// the script ends; WaitDelay is a backstop should a pipe stay open.
	cmd.WaitDelay = 10 * time.Second
	t0 := time.Now()
	err := cmd.Run()
	r := scriptRun{stdout: strings.TrimSpace(stdout.String()), stderr: stderr.String(), took: time.Since(t0)}
	if stderr.Len() > 0 {
		_, _ = os.Stderr.Write(stderr.Bytes())
	}
	if err != nil {
		r.err = fmt.Errorf("servers.sh %s %s: %w\n%s", action, db, err, stderr.String())
	}
	return r
}

func skipEnv(db string) string {
	return "YCSBCTL_SKIP_" + strings.ToUpper(db)
}

// skipIfSkipped skips the test when YCSBCTL_SKIP_<DB>=1, and fails it
// instead where CI requires every tool (CI must not skip a database).
func skipIfSkipped(t testing.TB, db string) {
	t.Helper()
	if os.Getenv(skipEnv(db)) == "1" {
		if tools.Required() {
			t.Fatalf("%s=1 and %s=1: CI must not skip a database", skipEnv(db), tools.RequireEnv)
		}
		t.Skipf("%s=1", skipEnv(db))
	}
}

// startServer returns the endpoint of db's server, starting it on first use.
// It skips the test when YCSBCTL_SKIP_<DB>=1 and fails it when the server
// cannot be started.
func startServer(t testing.TB, db string) string {
	t.Helper()
	skipIfSkipped(t, db)
	serversMu.Lock()
	defer serversMu.Unlock()
	st := servers[db]
	if st == nil || (!st.started && st.err == nil) {
		st = &serverState{}
		servers[db] = st
		r := runServers("start", db, serverStartTimeout)
		serverLog.add(t.Name(), "start", db, r)
		st.endpoint, st.err, st.took = r.stdout, r.err, r.took
		// Even a failed start may have left a process: let TestMain's
		// stop clean it up (stop only signals the recorded PID).
		st.started = true
		for _, l := range r.retries() {
			t.Logf("%s start retried: %s", db, l)
		}
		if st.err == nil {
			t.Logf("%s server ready at %s after %s", db, st.endpoint, st.took.Round(100*time.Millisecond))
		}
	}
	if st.err != nil {
		t.Fatalf("starting %s: %v", db, st.err)
	}
	return st.endpoint
}

// stopServer stops db's server now (if this binary started it). A later
// startServer starts it again, on a fresh data directory.
func stopServer(t testing.TB, db string) {
	t.Helper()
	serversMu.Lock()
	defer serversMu.Unlock()
	st := servers[db]
	if st == nil || !st.started {
		return
	}
	r := runServers("stop", db, time.Minute)
	serverLog.add(t.Name(), "stop", db, r)
	if r.err != nil {
		t.Errorf("stopping %s: %v", db, r.err)
	}
	delete(servers, db)
}

// ycsbKeyFor builds the YCSB key of record n as CoreWorkload does with
// insertorder=hashed: "user" + |FNV-1a 64 over the 8 bytes of n, least
// significant first| (Java's Math.abs, so MinInt64 would stay negative).
func ycsbKeyFor(n int64) string {
	const (
		offset = 0xcbf29ce484222325
		prime  = 1099511628211
	)
	h := uint64(offset)
	v := uint64(n)
	for i := 0; i < 8; i++ {
		h ^= v & 0xff
		h *= prime
		v >>= 8
	}
	r := int64(h)
	if r < 0 {
		r = -r
	}
	return "user" + strconv.FormatInt(r, 10)
}

// ---- Adapter conformance suite -------------------------------------------
//
// adapterSuite runs the same checks against any binding through the
// adapters interfaces; each database's test supplies how it orders scans
// and how to stop its server.

type adapterSuite struct {
	db         adapters.DB
	props      *properties.Properties
	table      string
	fieldCount int
	// scanOrder returns keys sorted in the order the database scans them.
	scanOrder func(t *testing.T, keys []string) []string
	// stop stops the server (for the outage check, always run last).
	stop func(t *testing.T)
	// opTimeout is the per-call timeout the binding was configured with.
	opTimeout time.Duration
	// extra, if set, runs database-specific checks after the scan checks,
	// with the keys inserted so far.
	extra func(t *testing.T, keys []string)
	// concurrentScanEvery makes each Concurrent16 worker scan on every
	// n-th iteration (0: every 10th). A stand-in server whose scans read
	// the whole table (FerretDB) sets it higher to stay within the timeouts.
	concurrentScanEvery int
}

const suiteRecords = 200

func suiteField(i int) string { return "field" + strconv.Itoa(i) }

// suiteValue is a deterministic 100-byte printable value for key/field/version.
func suiteValue(key string, field, version int) []byte {
	b := []byte(fmt.Sprintf("%s|f%d|v%d|", key, field, version))
	for len(b) < 100 {
		b = append(b, byte('a'+len(b)%26))
	}
	return b[:100]
}

func (s *adapterSuite) values(key string, version int) []adapters.Field {
	out := make([]adapters.Field, s.fieldCount)
	for i := range out {
		out[i] = adapters.Field{Name: suiteField(i), Value: suiteValue(key, i, version)}
	}
	return out
}

func (s *adapterSuite) checkRecord(t *testing.T, rec *adapters.Record, key string, fields []int, version func(field int) int) {
	t.Helper()
	require.Len(t, rec.Fields, len(fields), "fields of %s: %v", key, fieldNames(rec))
	for _, f := range fields {
		v, ok := rec.Get(suiteField(f))
		require.True(t, ok, "%s: missing %s (got %v)", key, suiteField(f), fieldNames(rec))
		assert.Equal(t, string(suiteValue(key, f, version(f))), string(v), "%s.%s", key, suiteField(f))
	}
}

func fieldNames(rec *adapters.Record) []string {
	out := make([]string, len(rec.Fields))
	for i, f := range rec.Fields {
		out[i] = f.Name
	}
	return out
}

func allFields(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func v0(int) int { return 0 }

func (s *adapterSuite) ctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func (s *adapterSuite) count(t *testing.T) int64 {
	t.Helper()
	rc, ok := s.db.(adapters.RecordCounter)
	require.True(t, ok, "binding implements RecordCounter")
	n, err := rc.CountRecords(s.ctx(t), s.table)
	require.NoError(t, err)
	return n
}

func (s *adapterSuite) run(t *testing.T) {
	keys := make([]string, suiteRecords)
	for i := range keys {
		keys[i] = ycsbKeyFor(int64(i))
	}
	deleted := map[string]bool{}

	t.Run("KeyGolden", func(t *testing.T) {
		require.Equal(t, "user6284781860667377211", ycsbKeyFor(0))
		require.Equal(t, "user8517097267634966620", ycsbKeyFor(1))
	})

	t.Run("CreateSchemaIdempotent", func(t *testing.T) {
		sm, ok := s.db.(adapters.SchemaManager)
		require.True(t, ok, "binding implements SchemaManager")
		msg1, err := sm.CreateSchema(s.ctx(t), s.props)
		require.NoError(t, err)
		t.Logf("first CreateSchema: %s", msg1)
		assert.Contains(t, msg1, "created")
		msg2, err := sm.CreateSchema(s.ctx(t), s.props)
		require.NoError(t, err)
		t.Logf("second CreateSchema: %s", msg2)
		assert.Contains(t, msg2, "already exists")
		assert.NotContains(t, msg2, "created")
	})

	t.Run("InsertAndRead", func(t *testing.T) {
		ctx := s.ctx(t)
		t0 := time.Now()
		for _, k := range keys {
			require.Equal(t, adapters.OK, s.db.Insert(ctx, s.table, []byte(k), s.values(k, 0)), "insert %s", k)
		}
		t.Logf("%d sequential inserts: %.0f ops/s", len(keys), float64(len(keys))/time.Since(t0).Seconds())
		var rec adapters.Record
		for _, k := range keys {
			require.Equal(t, adapters.OK, s.db.Read(ctx, s.table, []byte(k), nil, &rec), "read %s", k)
			s.checkRecord(t, &rec, k, allFields(s.fieldCount), v0)
		}
		// readallfieldsbyname: an explicit full list.
		all := make([]string, s.fieldCount)
		for i := range all {
			all[i] = suiteField(i)
		}
		require.Equal(t, adapters.OK, s.db.Read(ctx, s.table, []byte(keys[3]), all, &rec))
		s.checkRecord(t, &rec, keys[3], allFields(s.fieldCount), v0)
		// A subset returns exactly the named fields.
		require.Equal(t, adapters.OK, s.db.Read(ctx, s.table, []byte(keys[5]), []string{"field7", "field2"}, &rec))
		s.checkRecord(t, &rec, keys[5], []int{7, 2}, v0)
		require.Equal(t, adapters.OK, s.db.Read(ctx, s.table, []byte(keys[6]), []string{"field0"}, &rec))
		s.checkRecord(t, &rec, keys[6], []int{0}, v0)
	})

	t.Run("ReadMissingIsNotFound", func(t *testing.T) {
		var rec adapters.Record
		assert.Equal(t, adapters.NotFound, s.db.Read(s.ctx(t), s.table, []byte("user_never_inserted"), nil, &rec))
		assert.Equal(t, adapters.NotFound, s.db.Read(s.ctx(t), s.table, []byte("user_never_inserted"), []string{"field1"}, &rec))
	})

	t.Run("Update", func(t *testing.T) {
		ctx := s.ctx(t)
		k := keys[10]
		upd := []adapters.Field{{Name: "field3", Value: suiteValue(k, 3, 1)}}
		require.Equal(t, adapters.OK, s.db.Update(ctx, s.table, []byte(k), upd))
		var rec adapters.Record
		require.Equal(t, adapters.OK, s.db.Read(ctx, s.table, []byte(k), nil, &rec))
		s.checkRecord(t, &rec, k, allFields(s.fieldCount), func(f int) int {
			if f == 3 {
				return 1
			}
			return 0
		})
		// All fields at once (writeallfields=true).
		k2 := keys[11]
		require.Equal(t, adapters.OK, s.db.Update(ctx, s.table, []byte(k2), s.values(k2, 2)))
		require.Equal(t, adapters.OK, s.db.Read(ctx, s.table, []byte(k2), nil, &rec))
		s.checkRecord(t, &rec, k2, allFields(s.fieldCount), func(int) int { return 2 })
		// Put the records back to version 0 for the scan checks.
		require.Equal(t, adapters.OK, s.db.Update(ctx, s.table, []byte(k), s.values(k, 0)))
		require.Equal(t, adapters.OK, s.db.Update(ctx, s.table, []byte(k2), s.values(k2, 0)))
	})

	t.Run("ScanOrderAndCount", func(t *testing.T) {
		ctx := s.ctx(t)
		ordered := s.scanOrder(t, keys)
		require.Len(t, ordered, len(keys))
		var rows adapters.Rows
		for _, c := range []struct{ start, n int }{{0, 1}, {37, 20}, {100, 50}, {len(keys) - 5, 5}} {
			require.Equal(t, adapters.OK, s.db.Scan(ctx, s.table, []byte(ordered[c.start]), c.n, nil, &rows))
			require.Equal(t, c.n, rows.N, "scan from #%d for %d", c.start, c.n)
			for i := 0; i < rows.N; i++ {
				want := ordered[c.start+i]
				require.Equal(t, want, string(rows.Keys[i]), "row %d of scan from #%d", i, c.start)
				s.checkRecord(t, &rows.Records[i], want, allFields(s.fieldCount), v0)
			}
		}
		// Field subset.
		require.Equal(t, adapters.OK, s.db.Scan(ctx, s.table, []byte(ordered[20]), 10, []string{"field4", "field9"}, &rows))
		require.Equal(t, 10, rows.N)
		for i := 0; i < rows.N; i++ {
			require.Equal(t, ordered[20+i], string(rows.Keys[i]))
			s.checkRecord(t, &rows.Records[i], ordered[20+i], []int{4, 9}, v0)
		}
		// Past the end: only what is left.
		require.Equal(t, adapters.OK, s.db.Scan(ctx, s.table, []byte(ordered[len(ordered)-3]), 100, nil, &rows))
		assert.Equal(t, 3, rows.N)
	})

	if s.extra != nil {
		t.Run("Specific", func(t *testing.T) { s.extra(t, keys) })
	}

	t.Run("DeleteThenNotFound", func(t *testing.T) {
		ctx := s.ctx(t)
		for _, i := range []int{0, 42, 199} {
			k := keys[i]
			require.Equal(t, adapters.OK, s.db.Delete(ctx, s.table, []byte(k)))
			deleted[k] = true
			var rec adapters.Record
			assert.Equal(t, adapters.NotFound, s.db.Read(ctx, s.table, []byte(k), nil, &rec), "read after delete of %s", k)
		}
	})

	t.Run("CountRecordsExact", func(t *testing.T) {
		assert.Equal(t, int64(len(keys)-len(deleted)), s.count(t))
	})

	t.Run("BatchInsert", func(t *testing.T) {
		// Every adapter under this suite (Cassandra, HBase, MongoDB)
		// batches its load inserts; losing that would silently turn a
		// batched load into one round trip per record.
		bi, ok := s.db.(adapters.BatchInserter)
		require.True(t, ok, "adapter %T does not implement adapters.BatchInserter", s.db)
		ctx := s.ctx(t)
		before := s.count(t)
		const batches, size = 10, 100
		t0 := time.Now()
		for b := 0; b < batches; b++ {
			ks := make([][]byte, size)
			vs := make([][]adapters.Field, size)
			for i := range ks {
				k := ycsbKeyFor(int64(10000 + b*size + i))
				ks[i] = []byte(k)
				vs[i] = s.values(k, 0)
			}
			require.Equal(t, adapters.OK, bi.BatchInsert(ctx, s.table, ks, vs))
		}
		t.Logf("BatchInsert: %d records in batches of %d: %.0f records/s", batches*size, size,
			float64(batches*size)/time.Since(t0).Seconds())
		assert.Equal(t, before+int64(batches*size), s.count(t))
		var rec adapters.Record
		for _, n := range []int64{10000, 10555, 10999} {
			k := ycsbKeyFor(n)
			require.Equal(t, adapters.OK, s.db.Read(ctx, s.table, []byte(k), nil, &rec))
			s.checkRecord(t, &rec, k, allFields(s.fieldCount), v0)
		}
	})

	t.Run("Concurrent16", func(t *testing.T) {
		ctx := s.ctx(t)
		before := s.count(t)
		const workers, perWorker = 16, 150
		scanEvery := 10
		if s.concurrentScanEvery > 0 {
			scanEvery = s.concurrentScanEvery
		}
		var wg sync.WaitGroup
		errs := make(chan string, workers)
		t0 := time.Now()
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				var rec adapters.Record
				var rows adapters.Rows
				for i := 0; i < perWorker; i++ {
					k := ycsbKeyFor(int64(100000 + w*perWorker + i))
					if st := s.db.Insert(ctx, s.table, []byte(k), s.values(k, 0)); st != adapters.OK {
						errs <- fmt.Sprintf("insert %s: %s", k, st)
						return
					}
					if st := s.db.Read(ctx, s.table, []byte(k), nil, &rec); st != adapters.OK {
						errs <- fmt.Sprintf("read %s: %s", k, st)
						return
					}
					if string(mustGet(&rec, "field5")) != string(suiteValue(k, 5, 0)) {
						errs <- fmt.Sprintf("read %s: wrong field5", k)
						return
					}
					if st := s.db.Update(ctx, s.table, []byte(k), []adapters.Field{{Name: "field1", Value: suiteValue(k, 1, 1)}}); st != adapters.OK {
						errs <- fmt.Sprintf("update %s: %s", k, st)
						return
					}
					if i%scanEvery == 0 {
						if st := s.db.Scan(ctx, s.table, []byte(k), 10, nil, &rows); st != adapters.OK || rows.N == 0 {
							errs <- fmt.Sprintf("scan %s: %s (%d rows)", k, st, rows.N)
							return
						}
					}
				}
			}(w)
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
		ops := workers * perWorker * 3
		t.Logf("16 goroutines: %d insert/read/update ops (+scans) in %s: %.0f ops/s", ops,
			time.Since(t0).Round(time.Millisecond), float64(ops)/time.Since(t0).Seconds())
		assert.Equal(t, before+workers*perWorker, s.count(t))
		var rec adapters.Record
		k := ycsbKeyFor(100000 + 7*perWorker + 3)
		require.Equal(t, adapters.OK, s.db.Read(ctx, s.table, []byte(k), []string{"field1", "field2"}, &rec))
		s.checkRecord(t, &rec, k, []int{1, 2}, func(f int) int {
			if f == 1 {
				return 1
			}
			return 0
		})
	})

	t.Run("DropSchemaIdempotent", func(t *testing.T) {
		sm := s.db.(adapters.SchemaManager)
		// Drop in a separate table so the data above stays for the
		// outage check; the binding reads the table from the properties.
		p := s.props.Clone()
		p.Set("table", s.table+"_drop")
		msg, err := sm.CreateSchema(s.ctx(t), p)
		require.NoError(t, err)
		assert.Contains(t, msg, "created")
		msg, err = sm.DropSchema(s.ctx(t), p)
		require.NoError(t, err)
		t.Logf("first DropSchema: %s", msg)
		assert.Contains(t, msg, "dropped")
		msg, err = sm.DropSchema(s.ctx(t), p)
		require.NoError(t, err)
		t.Logf("second DropSchema: %s", msg)
		assert.Contains(t, msg, "does not exist")
	})

	// Last: the server goes away under the binding. Every call must come
	// back with a failure status within its timeout instead of hanging.
	t.Run("ServerStoppedCallsFailFast", func(t *testing.T) {
		limit := s.opTimeout + 5*time.Second
		// Workers keep reading and writing while the server stops; each
		// must see a failure and get control back soon after the stop.
		const workers = 4
		type outcome struct {
			st    adapters.Status
			after time.Duration // since the stop completed (negative: before)
			ops   int
		}
		var stopped atomic.Int64 // UnixNano when the stop completed
		results := make(chan outcome, workers)
		for w := 0; w < workers; w++ {
			go func(w int) {
				var rec adapters.Record
				for i := 0; ; i++ {
					k := []byte(keys[(w*37+i)%len(keys)])
					var st adapters.Status
					if i%2 == 0 {
						st = s.db.Read(context.Background(), s.table, k, nil, &rec)
					} else {
						st = s.db.Update(context.Background(), s.table, k, []adapters.Field{{Name: "field2", Value: []byte("during-stop")}})
					}
					if !st.IsOK() && st != adapters.NotFound {
						var after time.Duration
						if at := stopped.Load(); at != 0 {
							after = time.Since(time.Unix(0, at))
						} else {
							after = -1
						}
						results <- outcome{st, after, i}
						return
					}
				}
			}(w)
		}
		time.Sleep(300 * time.Millisecond) // let the workers get going
		t0 := time.Now()
		s.stop(t)
		stopped.Store(time.Now().UnixNano())
		t.Logf("server stop took %s", time.Since(t0).Round(time.Millisecond))
		deadline := time.After(limit)
		for w := 0; w < workers; w++ {
			select {
			case o := <-results:
				when := "while the server was stopping"
				if o.after >= 0 {
					when = o.after.Round(time.Millisecond).String() + " after the stop completed"
				}
				t.Logf("worker failed after %d ops with %s, %s", o.ops, o.st, when)
				assert.Contains(t, []adapters.Status{adapters.ServiceUnavailable, adapters.Error}, o.st)
			case <-deadline:
				t.Fatalf("%d workers still blocked %s after the server stopped", workers-w, limit)
			}
		}

		// Then each operation on its own, against the stopped server.
		k := []byte(keys[1])
		var rec adapters.Record
		var rows adapters.Rows
		calls := []struct {
			name string
			fn   func(ctx context.Context) adapters.Status
		}{
			{"read", func(ctx context.Context) adapters.Status { return s.db.Read(ctx, s.table, k, nil, &rec) }},
			{"insert", func(ctx context.Context) adapters.Status {
				return s.db.Insert(ctx, s.table, []byte("user_after_stop"), s.values("user_after_stop", 0))
			}},
			{"update", func(ctx context.Context) adapters.Status {
				return s.db.Update(ctx, s.table, k, []adapters.Field{{Name: "field1", Value: []byte("x")}})
			}},
			{"scan", func(ctx context.Context) adapters.Status { return s.db.Scan(ctx, s.table, k, 10, nil, &rows) }},
			{"delete", func(ctx context.Context) adapters.Status { return s.db.Delete(ctx, s.table, k) }},
		}
		for _, c := range calls {
			t0 := time.Now()
			// No deadline from the caller: the binding's own timeout must apply.
			st := c.fn(context.Background())
			took := time.Since(t0)
			t.Logf("%s with server stopped: %s after %s", c.name, st, took.Round(time.Millisecond))
			assert.False(t, st.IsOK(), "%s succeeded with the server stopped", c.name)
			assert.Contains(t, []adapters.Status{adapters.ServiceUnavailable, adapters.Error}, st, c.name)
			assert.Less(t, took, limit, "%s took longer than its timeout", c.name)
		}
		if rc, ok := s.db.(adapters.RecordCounter); ok {
			ctx, cancel := context.WithTimeout(context.Background(), limit)
			defer cancel()
			t0 := time.Now()
			_, err := rc.CountRecords(ctx, s.table)
			assert.Error(t, err)
			assert.Less(t, time.Since(t0), limit+time.Second, "CountRecords ignored its deadline")
		}
	})
}

func mustGet(rec *adapters.Record, name string) []byte {
	v, _ := rec.Get(name)
	return v
}
