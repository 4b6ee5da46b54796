package capacity

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/workload"
)

func TestParseObjective(t *testing.T) {
	for in, want := range map[string]Objective{
		"READ.p99<=10ms":                {Op: measurement.Read, Percentile: 99, Bound: 10 * time.Millisecond},
		"update.p99.9<=1.5s":            {Op: measurement.Update, Percentile: 99.9, Bound: 1500 * time.Millisecond},
		" SCAN.P50 <= 500us ":           {Op: measurement.Scan, Percentile: 50, Bound: 500 * time.Microsecond},
		"READ-MODIFY-WRITE.p95<=20ms":   {Op: measurement.ReadModifyWrite, Percentile: 95, Bound: 20 * time.Millisecond},
		"read-modify-write.p99.99<=1ms": {Op: measurement.ReadModifyWrite, Percentile: 99.99, Bound: time.Millisecond},
	} {
		got, err := ParseObjective(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
		again, err := ParseObjective(got.String())
		require.NoError(t, err)
		assert.Equal(t, got, again, "String parses back")
	}
	for in, msg := range map[string]string{
		"READ.p99":           "expected OPERATION.PERCENTILE<=DURATION",
		"READ<=10ms":         "expected OPERATION.PERCENTILE before <=",
		"FETCH.p99<=10ms":    `unknown operation "FETCH" (expected one of READ, UPDATE, INSERT, SCAN, DELETE, READ-MODIFY-WRITE)`,
		"CLEANUP.p99<=10ms":  "unknown operation",
		"READ.p100<=10ms":    "strictly between 0 and 100",
		"READ.p0<=10ms":      "strictly between 0 and 100",
		"READ.pxx<=10ms":     `percentile "pxx"`,
		"READ.p99<=10":       `bound "10": expected a positive duration`,
		"READ.p99<=-1ms":     "expected a positive duration",
		"READ.p99<=0s":       "expected a positive duration",
		"READ.p99<=10 weeks": "expected a positive duration",
	} {
		_, err := ParseObjective(in)
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), msg, in)
		assert.Contains(t, err.Error(), in, "the message quotes what was typed")
	}
}

func TestObjectiveJSON(t *testing.T) {
	o := Objective{Op: measurement.Read, Percentile: 99.9, Bound: 10 * time.Millisecond}
	b, err := json.Marshal([]Objective{o})
	require.NoError(t, err)
	assert.JSONEq(t, `["READ.p99.9<=10ms"]`, string(b))
	var back []Objective
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, []Objective{o}, back)
}

func TestCheckMix(t *testing.T) {
	cfg := func(kv ...string) *workload.Config {
		p := properties.New()
		p.SetPairs(kv...)
		c, err := workload.ParseConfig(p)
		require.NoError(t, err)
		return c
	}
	upd, _ := ParseObjective("UPDATE.p99<=10ms")
	read, _ := ParseObjective("READ.p99<=10ms")
	readOnly := cfg("readproportion", "1", "updateproportion", "0")
	err := CheckMix([]Objective{read, upd}, readOnly)
	require.Error(t, err)
	assert.Equal(t, "UPDATE.p99<=10ms: the workload never does UPDATE (its mix measures READ)", err.Error())
	assert.NoError(t, CheckMix([]Objective{read, upd}, cfg("readproportion", "0", "updateproportion", "0", "readmodifywriteproportion", "1")),
		"read-modify-write measures its READ and UPDATE")
}
