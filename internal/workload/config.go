// Package workload is YCSB's CoreWorkload: it turns properties into key
// choosers, field sets and an operation mix, and runs one insert or one
// transaction at a time against a database adapter, measuring every call.
//
// A Workload holds what all workers share (read-only configuration and the
// few counters YCSB shares between threads); each worker goroutine gets its
// own Worker with private generators, buffers and random source.
package workload

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/properties"
)

// Property names and defaults, as in YCSB's CoreWorkload.
const (
	PropTable                 = "table"
	PropFieldCount            = "fieldcount"
	PropFieldNamePrefix       = "fieldnameprefix"
	PropFieldLength           = "fieldlength"
	PropMinFieldLength        = "minfieldlength"
	PropFieldLengthDist       = "fieldlengthdistribution"
	PropFieldLengthHistogram  = "fieldlengthhistogram"
	PropReadAllFields         = "readallfields"
	PropReadAllFieldsByName   = "readallfieldsbyname"
	PropWriteAllFields        = "writeallfields"
	PropDataIntegrity         = "dataintegrity"
	PropReadProportion        = "readproportion"
	PropUpdateProportion      = "updateproportion"
	PropInsertProportion      = "insertproportion"
	PropScanProportion        = "scanproportion"
	PropRMWProportion         = "readmodifywriteproportion"
	PropDeleteProportion      = "deleteproportion"
	PropRequestDistribution   = "requestdistribution"
	PropHotspotDataFraction   = "hotspotdatafraction"
	PropHotspotOpnFraction    = "hotspotopnfraction"
	PropExponentialPercentile = "exponential.percentile"
	PropExponentialFrac       = "exponential.frac"
	PropZeroPadding           = "zeropadding"
	PropInsertOrder           = "insertorder"
	PropInsertStart           = "insertstart"
	PropInsertCount           = "insertcount"
	PropRecordCount           = "recordcount"
	PropOperationCount        = "operationcount"
	PropMinScanLength         = "minscanlength"
	PropMaxScanLength         = "maxscanlength"
	PropScanLengthDist        = "scanlengthdistribution"
	PropInsertRetryLimit      = "core_workload_insertion_retry_limit"
	PropInsertRetryInterval   = "core_workload_insertion_retry_interval"
	PropInsertKeepGoing       = "core_workload_insertion_keep_going_on_error"
	PropBatchSize             = "batchsize"
	PropKeyPrefix             = "keyprefix"
	// PropValues selects how random values are produced: "pool" (default)
	// slices windows out of a per-process pool of YCSB-distributed bytes;
	// "fresh" generates new bytes for every value as YCSB's
	// RandomByteIterator does. See values.go.
	PropValues = "ycsbctl.values"
	// PropInsertStripeIndex and PropInsertStripeCount make run-phase
	// inserts of several agents disjoint: agent i of n inserts key numbers
	// recordcount + k*n + i. The coordinator sets them; alone they are 0/1.
	// PropKeyspaceOperationCount, when set, replaces operationcount in
	// sizing the zipfian key space (expected new keys). The coordinator
	// sets it to the whole run's operationcount, because each agent's
	// operationcount is only its share.
	PropKeyspaceOperationCount = "ycsbctl.keyspace.operationcount"
	PropInsertStripeIndex      = "ycsbctl.insertstripe.index"
	PropInsertStripeCount      = "ycsbctl.insertstripe.count"
)

// Distribution names accepted by requestdistribution.
var requestDistributions = []string{"uniform", "zipfian", "latest", "hotspot", "sequential", "exponential"}

// Config is the validated CoreWorkload configuration.
type Config struct {
	Table               string
	FieldCount          int
	FieldNamePrefix     string
	FieldLength         int64
	MinFieldLength      int64
	FieldLengthDist     string
	FieldLengthHist     string
	ReadAllFields       bool
	ReadAllFieldsByName bool
	WriteAllFields      bool
	DataIntegrity       bool
	ReadProp            float64
	UpdateProp          float64
	InsertProp          float64
	ScanProp            float64
	RMWProp             float64
	DeleteProp          float64
	RequestDist         string
	HotspotData         float64
	HotspotOpn          float64
	ExpPercentile       float64
	ExpFrac             float64
	ZeroPadding         int
	OrderedInserts      bool
	InsertStart         int64
	InsertCount         int64
	RecordCount         int64
	OperationCount      int64
	HasOperationCount   bool
	// KeyspaceOperationCount sizes the zipfian key space (see
	// PropKeyspaceOperationCount).
	KeyspaceOperationCount int64
	MinScanLength          int64
	MaxScanLength          int64
	ScanLengthDist         string
	InsertRetryLimit       int64
	InsertRetryInterval    float64
	InsertKeepGoing        bool
	BatchSize              int64
	KeyPrefix              string
	FreshValues            bool
	StripeIndex            int64
	StripeCount            int64
}

// ParseConfig reads and validates CoreWorkload properties. Every error
// names the property and what was expected.
func ParseConfig(p *properties.Properties) (*Config, error) {
	c := &Config{}
	var err error
	e := func(e2 error) bool {
		if e2 != nil && err == nil {
			err = e2
		}
		return err != nil
	}
	c.Table = p.String(PropTable, "usertable")
	if c.Table == "" {
		return nil, &properties.Error{Property: PropTable, Expected: "a non-empty table name"}
	}
	fc, e1 := p.PositiveInt64(PropFieldCount, 10)
	if e(e1) {
		return nil, err
	}
	if fc > 1<<16 {
		return nil, &properties.Error{Property: PropFieldCount, Value: strconv.FormatInt(fc, 10), Expected: "at most 65536 fields"}
	}
	c.FieldCount = int(fc)
	c.FieldNamePrefix = verbatim(p, PropFieldNamePrefix, "field")
	c.FieldLength, e1 = p.PositiveInt64(PropFieldLength, 100)
	if e(e1) {
		return nil, err
	}
	if c.FieldLength > 64<<20 {
		return nil, &properties.Error{Property: PropFieldLength, Value: strconv.FormatInt(c.FieldLength, 10), Expected: "at most 67108864 bytes"}
	}
	c.MinFieldLength, e1 = p.PositiveInt64(PropMinFieldLength, 1)
	if e(e1) {
		return nil, err
	}
	c.FieldLengthDist, e1 = p.OneOf(PropFieldLengthDist, "constant", "constant", "uniform", "zipfian", "histogram")
	if e(e1) {
		return nil, err
	}
	c.FieldLengthHist = p.String(PropFieldLengthHistogram, "hist.txt")
	if (c.FieldLengthDist == "uniform" || c.FieldLengthDist == "zipfian") && c.MinFieldLength > c.FieldLength {
		return nil, &properties.Error{Property: PropMinFieldLength, Value: strconv.FormatInt(c.MinFieldLength, 10), Expected: fmt.Sprintf("at most fieldlength (%d)", c.FieldLength)}
	}
	if e(boolInto(p, PropReadAllFields, true, &c.ReadAllFields)) ||
		e(boolInto(p, PropReadAllFieldsByName, false, &c.ReadAllFieldsByName)) ||
		e(boolInto(p, PropWriteAllFields, false, &c.WriteAllFields)) ||
		e(boolInto(p, PropDataIntegrity, false, &c.DataIntegrity)) ||
		e(boolInto(p, PropInsertKeepGoing, false, &c.InsertKeepGoing)) {
		return nil, err
	}
	if c.DataIntegrity && c.FieldLengthDist != "constant" {
		return nil, &properties.Error{Property: PropFieldLengthDist, Value: c.FieldLengthDist, Expected: "constant when dataintegrity=true (verification needs a known value length)"}
	}
	for _, pp := range []struct {
		name string
		def  float64
		dst  *float64
	}{
		{PropReadProportion, 0.95, &c.ReadProp},
		{PropUpdateProportion, 0.05, &c.UpdateProp},
		{PropInsertProportion, 0, &c.InsertProp},
		{PropScanProportion, 0, &c.ScanProp},
		{PropRMWProportion, 0, &c.RMWProp},
		{PropDeleteProportion, 0, &c.DeleteProp},
	} {
		if e(floatInto(p, pp.name, pp.def, pp.dst, true)) {
			return nil, err
		}
	}
	if c.ReadProp+c.UpdateProp+c.InsertProp+c.ScanProp+c.RMWProp+c.DeleteProp <= 0 {
		return nil, &properties.Error{Property: PropReadProportion, Expected: "at least one of readproportion, updateproportion, insertproportion, scanproportion, readmodifywriteproportion, deleteproportion above 0"}
	}
	c.RequestDist, e1 = p.OneOf(PropRequestDistribution, "uniform", requestDistributions...)
	if e(e1) {
		return nil, err
	}
	if e(floatInto(p, PropHotspotDataFraction, 0.2, &c.HotspotData, true)) ||
		e(floatInto(p, PropHotspotOpnFraction, 0.8, &c.HotspotOpn, true)) ||
		e(floatInto(p, PropExponentialPercentile, 95, &c.ExpPercentile, false)) ||
		e(floatInto(p, PropExponentialFrac, 0.8571428571, &c.ExpFrac, false)) {
		return nil, err
	}
	if c.ExpPercentile <= 0 || c.ExpPercentile >= 100 {
		return nil, &properties.Error{Property: PropExponentialPercentile, Value: p.String(PropExponentialPercentile, ""), Expected: "a percentile strictly between 0 and 100"}
	}
	zp, e1 := p.PositiveInt64(PropZeroPadding, 1)
	if e(e1) {
		return nil, err
	}
	if zp > 64 {
		return nil, &properties.Error{Property: PropZeroPadding, Value: strconv.FormatInt(zp, 10), Expected: "at most 64"}
	}
	c.ZeroPadding = int(zp)
	c.OrderedInserts = insertOrdered(p)
	c.RecordCount, e1 = p.NonNegInt64(PropRecordCount, 0)
	if e(e1) {
		return nil, err
	}
	if c.RecordCount == 0 {
		// YCSB treats 0 as Integer.MAX_VALUE; int64 here.
		c.RecordCount = 1<<63 - 1
	}
	c.InsertStart, e1 = p.NonNegInt64(PropInsertStart, 0)
	if e(e1) {
		return nil, err
	}
	// insertstart and insertcount must fit in [0, recordcount). Each
	// refusal names a property the user set, with the value as set: an
	// unset insertcount defaults to recordcount - insertstart, and a
	// message about that derived figure would quote something nobody
	// typed.
	if c.InsertStart > c.RecordCount {
		return nil, &properties.Error{Property: PropInsertStart, Value: p.String(PropInsertStart, ""),
			Expected: fmt.Sprintf("at most recordcount (%d): the records are key numbers 0 to recordcount-1 and a load inserts from insertstart on", c.RecordCount)}
	}
	c.InsertCount = c.RecordCount - c.InsertStart
	if p.Has(PropInsertCount) {
		c.InsertCount, e1 = p.NonNegInt64(PropInsertCount, 0)
		if e(e1) {
			return nil, err
		}
		if left := c.RecordCount - c.InsertStart; c.InsertCount > left {
			return nil, &properties.Error{Property: PropInsertCount, Value: p.String(PropInsertCount, ""),
				Expected: fmt.Sprintf("at most recordcount - insertstart (%d - %d = %d): insertstart + insertcount <= recordcount", c.RecordCount, c.InsertStart, left)}
		}
	}
	if _, ok := p.Lookup(PropOperationCount); ok {
		c.HasOperationCount = true
		c.OperationCount, e1 = p.NonNegInt64(PropOperationCount, 0)
		if e(e1) {
			return nil, err
		}
	}
	c.KeyspaceOperationCount = c.OperationCount
	if _, ok := p.Lookup(PropKeyspaceOperationCount); ok {
		c.KeyspaceOperationCount, e1 = p.NonNegInt64(PropKeyspaceOperationCount, 0)
		if e(e1) {
			return nil, err
		}
	}
	if c.RequestDist == "zipfian" && !c.HasOperationCount {
		return nil, &properties.Error{Property: PropOperationCount, Expected: "a value when requestdistribution=zipfian (YCSB sizes the zipfian key space with it; use 0 with maxexecutiontime for a timed run)"}
	}
	c.MinScanLength, e1 = p.PositiveInt64(PropMinScanLength, 1)
	if e(e1) {
		return nil, err
	}
	c.MaxScanLength, e1 = p.PositiveInt64(PropMaxScanLength, 1000)
	if e(e1) {
		return nil, err
	}
	if c.MinScanLength > c.MaxScanLength {
		return nil, &properties.Error{Property: PropMinScanLength, Value: strconv.FormatInt(c.MinScanLength, 10), Expected: fmt.Sprintf("at most maxscanlength (%d)", c.MaxScanLength)}
	}
	c.ScanLengthDist, e1 = p.OneOf(PropScanLengthDist, "uniform", "uniform", "zipfian", "constant")
	if e(e1) {
		return nil, err
	}
	c.InsertRetryLimit, e1 = p.NonNegInt64(PropInsertRetryLimit, 0)
	if e(e1) {
		return nil, err
	}
	if e(floatInto(p, PropInsertRetryInterval, 3, &c.InsertRetryInterval, false)) {
		return nil, err
	}
	if c.InsertRetryInterval < 0 {
		return nil, &properties.Error{Property: PropInsertRetryInterval, Value: p.String(PropInsertRetryInterval, ""), Expected: "a non-negative number of seconds"}
	}
	c.BatchSize, e1 = p.PositiveInt64(PropBatchSize, 1)
	if e(e1) {
		return nil, err
	}
	c.KeyPrefix = verbatim(p, PropKeyPrefix, "user")
	v, e1 := p.OneOf(PropValues, "pool", "pool", "fresh")
	if e(e1) {
		return nil, err
	}
	c.FreshValues = v == "fresh"
	c.StripeIndex, e1 = p.NonNegInt64(PropInsertStripeIndex, 0)
	if e(e1) {
		return nil, err
	}
	c.StripeCount, e1 = p.PositiveInt64(PropInsertStripeCount, 1)
	if e(e1) {
		return nil, err
	}
	if c.StripeIndex >= c.StripeCount {
		return nil, &properties.Error{Property: PropInsertStripeIndex, Value: strconv.FormatInt(c.StripeIndex, 10), Expected: "below " + PropInsertStripeCount}
	}
	if c.FieldLengthDist == "histogram" {
		if _, serr := os.Stat(c.FieldLengthHist); serr != nil {
			return nil, &properties.Error{Property: PropFieldLengthHistogram, Value: c.FieldLengthHist, Expected: "a readable histogram file (" + strings.TrimSpace(serr.Error()) + ")"}
		}
	}
	return c, nil
}

func boolInto(p *properties.Properties, k string, def bool, dst *bool) error {
	v, err := p.Bool(k, def)
	*dst = v
	return err
}

func floatInto(p *properties.Properties, k string, def float64, dst *float64, proportion bool) error {
	var v float64
	var err error
	if proportion {
		v, err = p.Proportion(k, def)
	} else {
		v, err = p.Float64(k, def)
	}
	*dst = v
	return err
}

// MainOperation is the operation the run phase's mix weights most, ties
// going to the first in CoreWorkload's order (READ, UPDATE, INSERT, SCAN,
// READ-MODIFY-WRITE, then ycsbctl's DELETE). Comparisons show its latency
// for a step, so that every sweep value and database of the step shows
// the same series whatever happened to run more often.
func (c *Config) MainOperation() measurement.Op {
	mix := []struct {
		op measurement.Op
		p  float64
	}{{measurement.Read, c.ReadProp}, {measurement.Update, c.UpdateProp}, {measurement.Insert, c.InsertProp},
		{measurement.Scan, c.ScanProp}, {measurement.ReadModifyWrite, c.RMWProp}, {measurement.Delete, c.DeleteProp}}
	best := mix[0]
	for _, m := range mix[1:] {
		if m.p > best.p {
			best = m
		}
	}
	return best.op
}
