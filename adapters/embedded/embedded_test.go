package embedded_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/adapters/embedded"
	"github.com/ycsbctl/ycsbctl/internal/properties"
)

var ctx = context.Background()

func open(t *testing.T, dir string, kv ...string) adapters.DB {
	t.Helper()
	p := properties.FromMap(map[string]string{embedded.PropDir: dir})
	p.SetPairs(kv...)
	db, err := embedded.Open(ctx, p)
	require.NoError(t, err)
	return db
}

func fields(kv ...string) []adapters.Field {
	var out []adapters.Field
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, adapters.Field{Name: kv[i], Value: []byte(kv[i+1])})
	}
	return out
}

func asMap(r *adapters.Record) map[string]string {
	m := map[string]string{}
	for _, f := range r.Fields {
		m[f.Name] = string(f.Value)
	}
	return m
}

func TestCRUD(t *testing.T) {
	db := open(t, t.TempDir())
	defer func() { require.NoError(t, db.(adapters.Closer).Close()) }()
	var rec adapters.Record

	assert.Equal(t, adapters.NotFound, db.Read(ctx, "usertable", []byte("user1"), nil, &rec))
	assert.Equal(t, adapters.NotFound, db.Update(ctx, "usertable", []byte("user1"), fields("a", "1")))
	assert.Equal(t, adapters.NotFound, db.Delete(ctx, "usertable", []byte("user1")))

	require.Equal(t, adapters.OK, db.Insert(ctx, "usertable", []byte("user1"), fields("field0", "v0", "field1", "v1", "field2", "")))
	rec.Reset()
	require.Equal(t, adapters.OK, db.Read(ctx, "usertable", []byte("user1"), nil, &rec))
	assert.Equal(t, map[string]string{"field0": "v0", "field1": "v1", "field2": ""}, asMap(&rec))

	rec.Reset()
	require.Equal(t, adapters.OK, db.Read(ctx, "usertable", []byte("user1"), []string{"field1", "nosuch"}, &rec))
	assert.Equal(t, map[string]string{"field1": "v1"}, asMap(&rec))

	// Update merges: named fields change, the others stay.
	require.Equal(t, adapters.OK, db.Update(ctx, "usertable", []byte("user1"), fields("field1", "new", "field9", "added")))
	rec.Reset()
	require.Equal(t, adapters.OK, db.Read(ctx, "usertable", []byte("user1"), nil, &rec))
	assert.Equal(t, map[string]string{"field0": "v0", "field1": "new", "field2": "", "field9": "added"}, asMap(&rec))

	// Tables are separate.
	assert.Equal(t, adapters.NotFound, db.Read(ctx, "other", []byte("user1"), nil, &rec))

	require.Equal(t, adapters.OK, db.Delete(ctx, "usertable", []byte("user1")))
	assert.Equal(t, adapters.NotFound, db.Read(ctx, "usertable", []byte("user1"), nil, &rec))
	// Read with a nil record only checks existence.
	require.Equal(t, adapters.OK, db.Insert(ctx, "usertable", []byte("k"), fields("f", "v")))
	assert.Equal(t, adapters.OK, db.Read(ctx, "usertable", []byte("k"), nil, nil))
}

func TestScan(t *testing.T) {
	db := open(t, t.TempDir())
	defer func() { require.NoError(t, db.(adapters.Closer).Close()) }()
	for _, k := range []string{"user5", "user1", "user3", "user2", "user4"} {
		require.Equal(t, adapters.OK, db.Insert(ctx, "usertable", []byte(k), fields("field0", "v-"+k, "field1", "w")))
	}
	// Same prefix, other tables: never returned.
	require.Equal(t, adapters.OK, db.Insert(ctx, "usertable2", []byte("user0"), fields("x", "y")))
	require.Equal(t, adapters.OK, db.Insert(ctx, "user", []byte("table"), fields("x", "y")))

	tests := []struct {
		start  string
		count  int
		fields []string
		want   []string
	}{
		{"user2", 2, nil, []string{"user2", "user3"}},
		{"user2", 100, nil, []string{"user2", "user3", "user4", "user5"}},
		{"user0", 1, nil, []string{"user1"}},
		{"user35", 10, []string{"field0"}, []string{"user4", "user5"}},
		{"user9", 10, nil, nil},
		{"", 3, nil, []string{"user1", "user2", "user3"}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s/%d", tc.start, tc.count), func(t *testing.T) {
			var rows adapters.Rows
			require.Equal(t, adapters.OK, db.Scan(ctx, "usertable", []byte(tc.start), tc.count, tc.fields, &rows))
			var keys []string
			for i := 0; i < rows.N; i++ {
				keys = append(keys, string(rows.Keys[i]))
				m := asMap(&rows.Records[i])
				assert.Equal(t, "v-"+string(rows.Keys[i]), m["field0"])
				if tc.fields != nil {
					assert.Len(t, m, 1)
				} else {
					assert.Len(t, m, 2)
				}
			}
			assert.Equal(t, tc.want, keys)
		})
	}
}

func TestBatchInsertAndCount(t *testing.T) {
	db := open(t, t.TempDir())
	defer func() { require.NoError(t, db.(adapters.Closer).Close()) }()
	b, ok := db.(adapters.BatchInserter)
	require.True(t, ok, "the embedded store batches inserts")
	var keys [][]byte
	var vals [][]adapters.Field
	for i := 0; i < 7; i++ {
		keys = append(keys, []byte(fmt.Sprintf("user%d", i)))
		vals = append(vals, fields("field0", fmt.Sprint(i)))
	}
	require.Equal(t, adapters.OK, b.BatchInsert(ctx, "usertable", keys, vals))
	n, err := db.(adapters.RecordCounter).CountRecords(ctx, "usertable")
	require.NoError(t, err)
	assert.Equal(t, int64(7), n)
	var rec adapters.Record
	require.Equal(t, adapters.OK, db.Read(ctx, "usertable", []byte("user6"), nil, &rec))
	assert.Equal(t, map[string]string{"field0": "6"}, asMap(&rec))
}

func TestPersistsAndDrops(t *testing.T) {
	dir := t.TempDir()
	db := open(t, dir)
	for i := 0; i < 20; i++ {
		require.Equal(t, adapters.OK, db.Insert(ctx, "usertable", []byte(fmt.Sprintf("user%02d", i)), fields("f", "v")))
	}
	require.Equal(t, adapters.OK, db.Insert(ctx, "keep", []byte("k"), fields("f", "v")))
	require.NoError(t, db.(adapters.Closer).Close())

	db = open(t, dir, embedded.PropSync, "true", embedded.PropCache, "8")
	defer func() { require.NoError(t, db.(adapters.Closer).Close()) }()
	n, err := db.(adapters.RecordCounter).CountRecords(ctx, "usertable")
	require.NoError(t, err)
	assert.Equal(t, int64(20), n, "a load is visible to the next command")

	sm := db.(adapters.SchemaManager)
	msg, err := sm.CreateSchema(ctx, properties.New())
	require.NoError(t, err)
	assert.Contains(t, msg, dir)
	msg, err = sm.DropSchema(ctx, properties.New())
	require.NoError(t, err)
	assert.Contains(t, msg, "deleted 20 records")
	n, err = db.(adapters.RecordCounter).CountRecords(ctx, "usertable")
	require.NoError(t, err)
	assert.Zero(t, n)
	n, err = db.(adapters.RecordCounter).CountRecords(ctx, "keep")
	require.NoError(t, err)
	assert.Equal(t, int64(1), n, "drop only touches its table")
}

func TestConcurrentUse(t *testing.T) {
	db := open(t, t.TempDir())
	defer func() { require.NoError(t, db.(adapters.Closer).Close()) }()
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var rec adapters.Record
			for i := 0; i < 200; i++ {
				k := []byte(fmt.Sprintf("w%d-%d", w, i))
				assert.Equal(t, adapters.OK, db.Insert(ctx, "usertable", k, fields("f", string(k))))
				rec.Reset()
				assert.Equal(t, adapters.OK, db.Read(ctx, "usertable", k, nil, &rec))
				assert.Equal(t, string(k), asMap(&rec)["f"])
				assert.Equal(t, adapters.OK, db.Update(ctx, "usertable", k, fields("g", "x")))
			}
		}(w)
	}
	wg.Wait()
	n, err := db.(adapters.RecordCounter).CountRecords(ctx, "usertable")
	require.NoError(t, err)
	assert.Equal(t, int64(800), n)
}

func TestOpenErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	tests := []struct {
		kv   map[string]string
		prop string
	}{
		{map[string]string{embedded.PropDir: filepath.Join(file, "sub")}, embedded.PropDir},
		{map[string]string{embedded.PropDir: t.TempDir(), embedded.PropSync: "maybe"}, embedded.PropSync},
		{map[string]string{embedded.PropDir: t.TempDir(), embedded.PropCache: "0"}, embedded.PropCache},
	}
	for _, tc := range tests {
		_, err := embedded.Open(ctx, properties.FromMap(tc.kv))
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.prop)
		var pe *properties.Error
		if tc.prop != embedded.PropDir {
			assert.True(t, errors.As(err, &pe))
		}
	}
	info, err := adapters.Lookup("embedded")
	require.NoError(t, err)
	_, ok := properties.FindKnown(info.Properties, embedded.PropDir)
	assert.True(t, ok)
}

// TestDeclaresEveryPropertyRead runs Open, init and drop with read
// tracking on and fails if a property read is not declared.
func TestDeclaresEveryPropertyRead(t *testing.T) {
	ctx := context.Background()
	info, err := adapters.Lookup("embedded")
	require.NoError(t, err)
	p := properties.FromMap(map[string]string{embedded.PropDir: t.TempDir()})
	p.TrackReads()
	db, err := embedded.Open(ctx, p)
	require.NoError(t, err)
	defer func() { _ = db.(adapters.Closer).Close() }()
	sm := db.(adapters.SchemaManager)
	_, err = sm.CreateSchema(ctx, p)
	require.NoError(t, err)
	_, err = sm.DropSchema(ctx, p)
	require.NoError(t, err)
	assert.Contains(t, p.ReadKeys(), "table")
	assert.Empty(t, info.Undeclared(p.ReadKeys()), "read but not declared in adapters.Info.Properties")
}
