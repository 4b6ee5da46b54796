package workload

import "github.com/ycsbctl/ycsbctl/internal/properties"

// Known declares every property the core workload reads, with YCSB's
// default as a user would write it. `ycsbctl properties` lists them and
// the unknown-property check trusts them; a test proves that ParseConfig
// reads nothing else.
func Known() []properties.Known {
	return []properties.Known{
		{Name: PropRecordCount, Default: "0", Help: "records in the table after the load (0: unbounded in the run phase, as YCSB)"},
		{Name: PropOperationCount, Default: "0", Help: "operations in the run phase (0 with maxexecutiontime: a timed run)"},
		{Name: PropTable, Default: "usertable", Help: "table name"},
		{Name: PropFieldCount, Default: "10", Help: "fields per record"},
		{Name: PropFieldNamePrefix, Default: "field", Help: "field names are <prefix><i>"},
		{Name: PropFieldLength, Default: "100", Help: "field length in bytes (the maximum for uniform and zipfian)"},
		{Name: PropMinFieldLength, Default: "1", Help: "minimum field length for uniform and zipfian lengths"},
		{Name: PropFieldLengthDist, Default: "constant", Help: "constant, uniform, zipfian or histogram"},
		{Name: PropFieldLengthHistogram, Default: "hist.txt", Help: "histogram file for fieldlengthdistribution=histogram"},
		{Name: PropReadAllFields, Default: "true", Help: "read every field (false: one random field)"},
		{Name: PropReadAllFieldsByName, Default: "false", Help: "with readallfields, name the fields instead of asking for all"},
		{Name: PropWriteAllFields, Default: "false", Help: "updates write every field (false: one random field)"},
		{Name: PropDataIntegrity, Default: "false", Help: "deterministic values, verified on read (VERIFY)"},
		{Name: PropReadProportion, Default: "0.95", Help: "share of reads"},
		{Name: PropUpdateProportion, Default: "0.05", Help: "share of updates"},
		{Name: PropInsertProportion, Default: "0", Help: "share of inserts"},
		{Name: PropScanProportion, Default: "0", Help: "share of scans"},
		{Name: PropRMWProportion, Default: "0", Help: "share of read-modify-writes"},
		{Name: PropDeleteProportion, Default: "0", Help: "share of deletes (ycsbctl's; YCSB's CoreWorkload never deletes)"},
		{Name: PropRequestDistribution, Default: "uniform", Help: "uniform, zipfian, latest, hotspot, sequential or exponential"},
		{Name: PropHotspotDataFraction, Default: "0.2", Help: "hot set as a share of the keys"},
		{Name: PropHotspotOpnFraction, Default: "0.8", Help: "share of operations on the hot set"},
		{Name: PropExponentialPercentile, Default: "95", Help: "exponential distribution's percentile"},
		{Name: PropExponentialFrac, Default: "0.8571428571", Help: "exponential distribution's fraction of the keys"},
		{Name: PropZeroPadding, Default: "1", Help: "key digits are zero-padded to this width"},
		{Name: PropInsertOrder, Default: "hashed", Help: "hashed or ordered keys"},
		{Name: PropInsertStart, Default: "0", Help: "first key number of this client's range"},
		{Name: PropInsertCount, Default: "recordcount - insertstart", Help: "keys in this client's range"},
		{Name: PropMinScanLength, Default: "1", Help: "shortest scan"},
		{Name: PropMaxScanLength, Default: "1000", Help: "longest scan"},
		{Name: PropScanLengthDist, Default: "uniform", Help: "uniform or zipfian scan lengths between minscanlength and maxscanlength; constant (ycsbctl's, not YCSB's): every scan asks for maxscanlength rows"},
		{Name: PropInsertRetryLimit, Default: "0", Help: "load-phase insert retries"},
		{Name: PropInsertRetryInterval, Default: "3", Help: "seconds between insert retries (jittered as YCSB)"},
		{Name: PropInsertKeepGoing, Default: "false", Help: "count a failed insert and keep loading"},
		{Name: PropBatchSize, Default: "1", Help: "inserts per batch through adapters that can batch"},
		{Name: PropKeyPrefix, Default: "user", Help: "key name prefix (ycsbctl's)"},
		{Name: PropValues, Default: "pool", Help: "pool: values sliced from a pool of YCSB-distributed bytes; fresh: new bytes per value"},
		{Name: PropKeyspaceOperationCount, Help: "set by the coordinator: the whole run's operationcount, sizing the zipfian key space"},
		{Name: PropInsertStripeIndex, Default: "0", Help: "set by the coordinator: this agent's stripe of run-phase inserts"},
		{Name: PropInsertStripeCount, Default: "1", Help: "set by the coordinator: the number of stripes (agents)"},
	}
}
