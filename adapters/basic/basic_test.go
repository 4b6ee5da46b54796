package basic_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/adapters/basic"
	"github.com/ycsbctl/ycsbctl/internal/properties"
)

func open(t *testing.T, kv map[string]string) (adapters.DB, *bytes.Buffer) {
	t.Helper()
	var buf bytes.Buffer
	old := basic.Output
	basic.Output = &buf
	t.Cleanup(func() { basic.Output = old })
	db, err := basic.Open(context.Background(), properties.FromMap(kv))
	require.NoError(t, err)
	return db, &buf
}

func TestRegistered(t *testing.T) {
	info, err := adapters.Lookup("basic")
	require.NoError(t, err)
	assert.Equal(t, "basic", info.Name)
	_, ok := properties.FindKnown(info.Properties, basic.PropVerbose)
	assert.True(t, ok)
	assert.Contains(t, info.Classes, "site.ycsb.BasicDB")
}

// TestDeclaresEveryPropertyRead opens the adapter with read tracking on and
// fails if it looked up a property it does not declare.
func TestDeclaresEveryPropertyRead(t *testing.T) {
	info, err := adapters.Lookup("basic")
	require.NoError(t, err)
	p := properties.FromMap(map[string]string{basic.PropVerbose: "false"})
	p.TrackReads()
	_, err = basic.Open(context.Background(), p)
	require.NoError(t, err)
	require.NotEmpty(t, p.ReadKeys())
	assert.Empty(t, info.Undeclared(p.ReadKeys()), "read but not declared in adapters.Info.Properties")
}

// TestVerboseLinesMatchYCSB checks the lines YCSB's BasicDB prints.
func TestVerboseLinesMatchYCSB(t *testing.T) {
	ctx := context.Background()
	vals := []adapters.Field{{Name: "field0", Value: []byte("abc")}, {Name: "field1", Value: []byte("x y")}}
	tests := []struct {
		name string
		call func(db adapters.DB) adapters.Status
		want string
	}{
		{"read all", func(db adapters.DB) adapters.Status {
			return db.Read(ctx, "usertable", []byte("user1"), nil, &adapters.Record{})
		}, "READ usertable user1 [ <all fields>]"},
		{"read some", func(db adapters.DB) adapters.Status {
			return db.Read(ctx, "usertable", []byte("user1"), []string{"field0", "field3"}, &adapters.Record{})
		}, "READ usertable user1 [ field0 field3 ]"},
		{"scan all", func(db adapters.DB) adapters.Status {
			return db.Scan(ctx, "usertable", []byte("user2"), 17, nil, &adapters.Rows{})
		}, "SCAN usertable user2 17 [ <all fields>]"},
		{"scan some", func(db adapters.DB) adapters.Status {
			return db.Scan(ctx, "t", []byte("user2"), 3, []string{"field9"}, &adapters.Rows{})
		}, "SCAN t user2 3 [ field9 ]"},
		{"update", func(db adapters.DB) adapters.Status {
			return db.Update(ctx, "usertable", []byte("user3"), vals[:1])
		}, "UPDATE usertable user3 [ field0=abc ]"},
		{"insert", func(db adapters.DB) adapters.Status {
			return db.Insert(ctx, "usertable", []byte("user4"), vals)
		}, "INSERT usertable user4 [ field0=abc field1=x y ]"},
		{"delete", func(db adapters.DB) adapters.Status {
			return db.Delete(ctx, "usertable", []byte("user5"))
		}, "DELETE usertable user5"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Through a per-worker handle (the engine) and the shared DB
			// (the shell).
			db, buf := open(t, map[string]string{"basicdb.verbose": "true"})
			w, err := db.(adapters.Threader).ForWorker(ctx, 0, 1)
			require.NoError(t, err)
			assert.Equal(t, adapters.OK, tc.call(w))
			require.NoError(t, w.(adapters.Closer).Close())
			assert.Equal(t, adapters.OK, tc.call(db))
			require.NoError(t, db.(adapters.Closer).Close())
			assert.Equal(t, tc.want+"\n"+tc.want+"\n", buf.String())
		})
	}
}

func TestVerboseIsTheDefault(t *testing.T) {
	db, buf := open(t, nil)
	db.Read(context.Background(), "usertable", []byte("k"), nil, nil)
	require.NoError(t, db.(adapters.Closer).Close())
	assert.True(t, strings.HasPrefix(buf.String(), "READ usertable k"), "YCSB's basicdb.verbose defaults to true")
}

func TestQuiet(t *testing.T) {
	db, buf := open(t, map[string]string{"basicdb.verbose": "false"})
	ctx := context.Background()
	w, err := db.(adapters.Threader).ForWorker(ctx, 0, 1)
	require.NoError(t, err)
	for i := 0; i < 100; i++ {
		assert.Equal(t, adapters.OK, w.Read(ctx, "usertable", []byte("k"), nil, nil))
		assert.Equal(t, adapters.OK, w.Insert(ctx, "usertable", []byte("k"), nil))
	}
	require.NoError(t, w.(adapters.Closer).Close())
	require.NoError(t, db.(adapters.Closer).Close())
	assert.Empty(t, buf.String())
}

func TestSimulatedDelay(t *testing.T) {
	ctx := context.Background()
	db, _ := open(t, map[string]string{"basicdb.verbose": "false", "basicdb.simulatedelay": "20", "basicdb.randomizedelay": "false"})
	w, err := db.(adapters.Threader).ForWorker(ctx, 0, 1)
	require.NoError(t, err)
	start := time.Now()
	w.Read(ctx, "t", []byte("k"), nil, nil)
	assert.GreaterOrEqual(t, time.Since(start), 20*time.Millisecond)

	// Randomized: uniform 0..delay, so never above it (plus slack).
	db, _ = open(t, map[string]string{"basicdb.verbose": "false", "basicdb.simulatedelay": "5"})
	w, err = db.(adapters.Threader).ForWorker(ctx, 0, 1)
	require.NoError(t, err)
	start = time.Now()
	for i := 0; i < 10; i++ {
		w.Update(ctx, "t", []byte("k"), nil)
	}
	assert.Less(t, time.Since(start), 10*5*time.Millisecond+500*time.Millisecond)

	// A cancelled context cuts the delay short.
	db, _ = open(t, map[string]string{"basicdb.verbose": "false", "basicdb.simulatedelay": "10000", "basicdb.randomizedelay": "false"})
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	start = time.Now()
	db.Delete(cctx, "t", []byte("k"))
	assert.Less(t, time.Since(start), time.Second)
}

func TestBadProperties(t *testing.T) {
	for prop, val := range map[string]string{
		"basicdb.verbose":        "yes",
		"basicdb.simulatedelay":  "-1",
		"basicdb.randomizedelay": "sometimes",
	} {
		_, err := basic.Open(context.Background(), properties.FromMap(map[string]string{prop: val}))
		var pe *properties.Error
		require.True(t, errors.As(err, &pe), "%s: %v", prop, err)
		assert.Equal(t, prop, pe.Property)
	}
}

// TestSlotsValidated: a simulated server that cannot be built is refused,
// naming basicdb.slots and what was expected (an invalid configuration:
// exit 2).
func TestSlotsValidated(t *testing.T) {
	for _, tc := range []struct {
		kv   map[string]string
		want string
	}{
		{map[string]string{basic.PropSlots: "-1", basic.PropSimulatedDelay: "2"}, "non-negative"},
		{map[string]string{basic.PropSlots: "x", basic.PropSimulatedDelay: "2"}, "an integer"},
		{map[string]string{basic.PropSlots: "4"}, "unless basicdb.simulatedelay is above 0"},
		{map[string]string{basic.PropSlots: "70000", basic.PropSimulatedDelay: "2"}, "at most 65536"},
	} {
		_, err := basic.Open(context.Background(), properties.FromMap(tc.kv))
		var pe *properties.Error
		if assert.ErrorAs(t, err, &pe, "%v", tc.kv) {
			assert.Equal(t, basic.PropSlots, pe.Property)
			assert.Contains(t, err.Error(), tc.want)
		}
	}
	_, err := basic.Open(context.Background(), properties.FromMap(map[string]string{basic.PropSlots: "4", basic.PropSimulatedDelay: "2"}))
	require.NoError(t, err)
}
