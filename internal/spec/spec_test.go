package spec_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/ycsbctl/ycsbctl/adapters/basic"
	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/spec"
)

func props(kv ...string) *properties.Properties {
	p := properties.New()
	p.SetPairs(kv...)
	return p
}

func TestParseSettingsDefaults(t *testing.T) {
	s, err := spec.ParseSettings(props("operationcount", "10"), run.Run)
	require.NoError(t, err)
	assert.Equal(t, 1, s.Threads)
	assert.Zero(t, s.Target)
	assert.Equal(t, int64(10), s.OpCount)
	assert.Equal(t, 10*time.Second, s.StatusInterval)
	assert.Equal(t, measurement.ModeOp, s.Mode)
	assert.Equal(t, "op", s.ModeName)
	assert.Equal(t, []float64{50, 95, 99}, s.Percentiles)
	assert.Equal(t, "hdrhistogram", s.MeasurementTyp)
	assert.Zero(t, s.MaxExecution)
}

func TestParseSettings(t *testing.T) {
	s, err := spec.ParseSettings(props("operationcount", "0", "maxexecutiontime", "30", "threadcount", "8", "target", "1500.5",
		"status.interval", "0.5", "measurement.interval", "both", "warmuptime", "1.5", "warmupops", "100",
		"hdrhistogram.percentiles", "50, 99.9 ,99.99", "measurementtype", "timeseries", "workload", "core"), run.Run)
	require.NoError(t, err)
	assert.Equal(t, 8, s.Threads)
	assert.Equal(t, 1500.5, s.Target)
	assert.Zero(t, s.OpCount)
	assert.Equal(t, 30*time.Second, s.MaxExecution)
	assert.Equal(t, 500*time.Millisecond, s.StatusInterval)
	assert.Equal(t, measurement.ModeBoth, s.Mode)
	assert.Equal(t, 1500*time.Millisecond, s.WarmupTime)
	assert.Equal(t, int64(100), s.WarmupOps)
	assert.Equal(t, []float64{50, 99.9, 99.99}, s.Percentiles)
	assert.Equal(t, "timeseries", s.MeasurementTyp)
}

func TestLoadOpCount(t *testing.T) {
	tests := []struct {
		kv   []string
		want int64
	}{
		{[]string{"recordcount", "1000"}, 1000},
		{[]string{"recordcount", "1000", "insertstart", "400"}, 600},
		{[]string{"recordcount", "1000", "insertstart", "400", "insertcount", "100"}, 100},
		{[]string{"recordcount", "1000", "operationcount", "5"}, 1000},
	}
	for _, tc := range tests {
		s, err := spec.ParseSettings(props(tc.kv...), run.Load)
		require.NoError(t, err, "%v", tc.kv)
		assert.Equal(t, tc.want, s.OpCount, "%v", tc.kv)
	}
}

func TestParseSettingsErrors(t *testing.T) {
	tests := []struct {
		kv    []string
		phase run.Phase
		prop  string
	}{
		{[]string{"operationcount", "10", "threadcount", "0"}, run.Run, "threadcount"},
		{[]string{"operationcount", "10", "threadcount", "x"}, run.Run, "threadcount"},
		{[]string{"operationcount", "10", "target", "-1"}, run.Run, "target"},
		{[]string{"operationcount", "10", "target", "fast"}, run.Run, "target"},
		{[]string{"operationcount", "10", "status.interval", "-1"}, run.Run, "status.interval"},
		{[]string{"operationcount", "10", "maxexecutiontime", "-1"}, run.Run, "maxexecutiontime"},
		{[]string{"operationcount", "10", "warmuptime", "-1"}, run.Run, "warmuptime"},
		{[]string{"operationcount", "10", "warmupops", "-1"}, run.Run, "warmupops"},
		{[]string{"operationcount", "10", "measurement.interval", "all"}, run.Run, "measurement.interval"},
		{[]string{"operationcount", "10", "measurementtype", "histo"}, run.Run, "measurementtype"},
		{[]string{"operationcount", "10", "hdrhistogram.percentiles", "0"}, run.Run, "hdrhistogram.percentiles"},
		{[]string{"operationcount", "10", "workload", "site.ycsb.workloads.RestWorkload"}, run.Run, "workload"},
		{[]string{}, run.Run, "operationcount"},
		{[]string{"operationcount", "-3"}, run.Run, "operationcount"},
		{[]string{}, run.Load, "recordcount"},
		{[]string{"recordcount", "10", "insertcount", "11"}, run.Load, "insertcount"},
	}
	for _, tc := range tests {
		_, err := spec.ParseSettings(props(tc.kv...), tc.phase)
		var pe *properties.Error
		require.True(t, errors.As(err, &pe), "%v: %v", tc.kv, err)
		assert.Equal(t, tc.prop, pe.Property, "%v", tc.kv)
	}
}

func TestParsePercentiles(t *testing.T) {
	tests := []struct {
		in   string
		want []float64
		err  bool
	}{
		{"50,95,99", []float64{50, 95, 99}, false},
		{" 1 , 99.9,100 ", []float64{1, 99.9, 100}, false},
		{"50,,99,", []float64{50, 99}, false},
		{"", nil, false},
		{"50,x", nil, true},
		{"0", nil, true},
		{"100.1", nil, true},
		{"-5", nil, true},
	}
	for _, tc := range tests {
		got, err := spec.ParsePercentiles(tc.in)
		if tc.err {
			assert.Error(t, err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
}

func TestParseAndPrepare(t *testing.T) {
	_, err := spec.Parse("nosuch", props("operationcount", "1"), run.Run)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "basic")

	p := props("operationcount", "100", "recordcount", "100", "basicdb.verbose", "false", "threadcount", "3")
	sp, err := spec.Parse("basic", p, run.Run)
	require.NoError(t, err)
	prep, err := spec.Prepare(context.Background(), sp, clock.NewReal(), nil, nil)
	require.NoError(t, err)
	defer func() { _ = prep.Close() }()
	assert.Equal(t, "basic", prep.Spec.Adapter.Name)
	assert.Equal(t, 3, prep.Runner.Threads())
	prep.Runner.Start(time.Time{})
	res := prep.Runner.Wait()
	assert.Equal(t, int64(100), res.Total.Ops)

	// An adapter property error is reported before anything runs.
	sp, err = spec.Parse("basic", props("operationcount", "1", "basicdb.verbose", "loud"), run.Run)
	require.NoError(t, err)
	_, err = spec.Prepare(context.Background(), sp, clock.NewReal(), nil, nil)
	var pe *properties.Error
	require.True(t, errors.As(err, &pe), "%v", err)
	assert.Equal(t, "basicdb.verbose", pe.Property)
}
