package spec

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/workload"
)

// TestRecordMemory checks the model against the sizes YCSB users type:
// its defaults and large but ordinary records pass, a record of gigabytes
// per thread does not, and a batch counts every record it holds.
func TestRecordMemory(t *testing.T) {
	check := func(phase run.Phase, threads int, kv ...string) error {
		p := properties.New()
		p.SetPairs(append([]string{"recordcount", "1000", "operationcount", "10"}, kv...)...)
		cfg, err := workload.ParseConfig(p)
		require.NoError(t, err)
		return checkRecordMemory(cfg, threads, phase)
	}
	assert.NoError(t, check(run.Run, 64))
	assert.NoError(t, check(run.Run, 100, "fieldlength", "100000"), "1 MB records on 100 threads")
	assert.NoError(t, check(run.Load, 8, "batchsize", "1000"), "batches of 1 KB records")
	err := check(run.Run, 4, "fieldlength", "67108864", "fieldcount", "1000", "ycsbctl.values", "fresh")
	require.Error(t, err)
	for _, w := range []string{`"fieldlength"="67108864"`, "a record of 62.5 GiB", "4 threads", "2 copies each", "needs 500 GiB", "available"} {
		assert.Contains(t, err.Error(), w)
	}
	err = check(run.Load, 4, "fieldlength", "1000000", "fieldcount", "10", "batchsize", "100000")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "100000 records (batchsize)")
	assert.NoError(t, check(run.Run, 4, "fieldlength", "1000000", "fieldcount", "10", "batchsize", "100000"), "batches are a load-phase setting")
}

func TestFmtBytes(t *testing.T) {
	for n, want := range map[float64]string{0: "0 B", 100: "100 B", 1536: "1.5 KiB", 64 << 20: "64 MiB", 62.5 * (1 << 30): "62.5 GiB"} {
		assert.Equal(t, want, fmtBytes(n))
	}
}
