package adapters_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/adapters/cassandra"
	"github.com/ycsbctl/ycsbctl/adapters/embedded"
	"github.com/ycsbctl/ycsbctl/adapters/hbase"
	"github.com/ycsbctl/ycsbctl/adapters/mongodb"
	"github.com/ycsbctl/ycsbctl/internal/properties"
)

// batch is n records: key i goes with one field whose value names i.
func batch(n int) ([][]byte, [][]adapters.Field) {
	keys, values := make([][]byte, n), make([][]adapters.Field, n)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("user%d", i))
		values[i] = []adapters.Field{{Name: "field0", Value: []byte(fmt.Sprintf("value%d", i))}}
	}
	return keys, values
}

// guardCases are batches the guard answers without writing anything.
var guardCases = []struct {
	name         string
	keys, values int
	want         adapters.Status
}{
	{"more keys than values", 2, 1, adapters.BadRequest},
	{"more values than keys", 1, 2, adapters.BadRequest},
	{"values without keys", 0, 1, adapters.BadRequest},
	{"empty", 0, 0, adapters.OK},
}

func TestCheckBatch(t *testing.T) {
	for _, c := range guardCases {
		keys, _ := batch(c.keys)
		_, values := batch(c.values)
		st, done := adapters.CheckBatch(keys, values)
		require.True(t, done, c.name)
		require.Equal(t, c.want, st, c.name)
	}
	keys, values := batch(3)
	st, done := adapters.CheckBatch(keys, values)
	require.False(t, done, "a batch to write")
	require.Equal(t, adapters.OK, st)
}

// TestFanOut: every record is inserted once, with its own values and
// its own deadline, at most Parallelism at a time; a failure is the
// batch's status as Fail says it; a batch the guard answers writes
// nothing.
func TestFanOut(t *testing.T) {
	type ctxKey struct{}
	var (
		mu                  sync.Mutex
		got                 map[string]string
		inFlight, peak, ctx atomic.Int32
		cancels             atomic.Int32
		failed              []string
	)
	boom := errors.New("boom")
	f := adapters.FanOut{
		Parallelism: 3,
		Deadline: func(parent context.Context) (context.Context, context.CancelFunc) {
			ctx.Add(1)
			c, cancel := context.WithCancel(context.WithValue(parent, ctxKey{}, true))
			return c, func() { cancels.Add(1); cancel() }
		},
		Insert: func(c context.Context, table string, key []byte, values []adapters.Field) error {
			if c.Value(ctxKey{}) != true || table != "usertable" {
				return fmt.Errorf("insert of %s without its own context or in table %q", key, table)
			}
			n := inFlight.Add(1)
			defer inFlight.Add(-1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			if string(key) == "user5" && failed != nil {
				return boom
			}
			mu.Lock()
			defer mu.Unlock()
			if _, dup := got[string(key)]; dup {
				return fmt.Errorf("%s inserted twice", key)
			}
			got[string(key)] = string(values[0].Value)
			return nil
		},
		Fail: func(op string, err error) adapters.Status {
			failed = append(failed, op+": "+err.Error())
			return adapters.ServiceUnavailable
		},
	}

	got = map[string]string{}
	keys, values := batch(50)
	require.Equal(t, adapters.OK, f.BatchInsert(context.Background(), "usertable", keys, values))
	require.Len(t, got, 50)
	for i := range keys {
		require.Equal(t, fmt.Sprintf("value%d", i), got[string(keys[i])])
	}
	require.Equal(t, int32(50), ctx.Load(), "one deadline per record")
	require.Equal(t, int32(50), cancels.Load(), "every deadline released")
	require.LessOrEqual(t, peak.Load(), int32(3))

	got, failed = map[string]string{}, []string{}
	require.Equal(t, adapters.ServiceUnavailable, f.BatchInsert(context.Background(), "usertable", keys, values))
	require.Equal(t, []string{"batch insert: boom"}, failed, "the first failure, said once")

	for _, c := range guardCases {
		got, failed = map[string]string{}, nil
		keys, _ := batch(c.keys)
		_, values := batch(c.values)
		require.Equal(t, c.want, f.BatchInsert(context.Background(), "usertable", keys, values), c.name)
		require.Empty(t, got, "%s: nothing written", c.name)
	}
}

// TestEveryBatchInserterGuardsItsBatch: every binding's BatchInsert
// answers the batches the guard answers in the same way, before it
// touches its database (the bindings of servers are not connected
// here). A binding registered without being listed fails the test, so a
// new one is checked too. Before the guard was shared the embedded store
// had none: more keys than values panicked (index out of range).
func TestEveryBatchInserterGuardsItsBatch(t *testing.T) {
	emb, err := embedded.Open(context.Background(), properties.FromMap(map[string]string{embedded.PropDir: t.TempDir()}))
	require.NoError(t, err)
	defer func() { require.NoError(t, emb.(adapters.Closer).Close()) }()
	bindings := map[string]adapters.BatchInserter{
		"basic":     nil, // no BatchInsert: the workload inserts one by one
		"cassandra": &cassandra.DB{},
		"embedded":  emb.(adapters.BatchInserter),
		"hbase":     &hbase.DB{},
		"mongodb":   &mongodb.DB{},
	}
	for _, alias := range adapters.Names() {
		info, err := adapters.Lookup(alias)
		require.NoError(t, err)
		name := info.Name
		b, ok := bindings[name]
		require.True(t, ok, "binding %s is not listed here: say whether it implements BatchInsert", name)
		if b == nil {
			continue
		}
		for _, c := range guardCases {
			keys, _ := batch(c.keys)
			_, values := batch(c.values)
			require.Equal(t, c.want, b.BatchInsert(context.Background(), "usertable", keys, values), "%s: %s", name, c.name)
		}
	}
	n, err := emb.(adapters.RecordCounter).CountRecords(context.Background(), "usertable")
	require.NoError(t, err)
	require.Zero(t, n, "the embedded store wrote nothing")
}
