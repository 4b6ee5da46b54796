package workloads_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/workload"
	"github.com/ycsbctl/ycsbctl/workloads"
)

func parse(t *testing.T, name string) *properties.Properties {
	t.Helper()
	w, ok := workloads.Lookup(name)
	require.True(t, ok, name)
	p := properties.New()
	require.NoError(t, p.Load(strings.NewReader(w.Text)))
	return p
}

func TestList(t *testing.T) {
	want := []string{
		"comparison2014-bulkload", "comparison2014-insertread", "comparison2014-load", "comparison2014-read",
		"comparison2014-readlatest", "comparison2014-readmodifywrite", "comparison2014-readmostly", "comparison2014-scan", "comparison2014-update",
		"hbase-pe-randomread", "hbase-pe-randomwrite", "hbase-pe-scan10", "hbase-pe-scan100", "hbase-pe-sequentialwrite",
		"workloada", "workloadb", "workloadc", "workloadd", "workloade", "workloadf", "workloadg",
	}
	var names []string
	for _, w := range workloads.List() {
		names = append(names, w.Name)
		assert.NotEmpty(t, w.Description, w.Name)
		assert.NotContains(t, w.Description, "\n")
		assert.NotEmpty(t, w.Text)
	}
	assert.Equal(t, want, names)
}

func TestLookupUnknown(t *testing.T) {
	for _, n := range []string{"", "workloadz", "../workloada", "workloads.go", "workloada/", "./workloada"} {
		_, ok := workloads.Lookup(n)
		assert.False(t, ok, n)
	}
}

// TestYCSBWorkloads checks the built-in copies against YCSB's files.
func TestYCSBWorkloads(t *testing.T) {
	common := map[string]string{
		"recordcount": "1000", "operationcount": "1000",
		"workload": "site.ycsb.workloads.CoreWorkload", "readallfields": "true",
	}
	tests := map[string]map[string]string{
		"workloada": {"readproportion": "0.5", "updateproportion": "0.5", "scanproportion": "0", "insertproportion": "0", "requestdistribution": "zipfian"},
		"workloadb": {"readproportion": "0.95", "updateproportion": "0.05", "scanproportion": "0", "insertproportion": "0", "requestdistribution": "zipfian"},
		"workloadc": {"readproportion": "1", "updateproportion": "0", "scanproportion": "0", "insertproportion": "0", "requestdistribution": "zipfian"},
		"workloadd": {"readproportion": "0.95", "updateproportion": "0", "scanproportion": "0", "insertproportion": "0.05", "requestdistribution": "latest"},
		"workloade": {"readproportion": "0", "updateproportion": "0", "scanproportion": "0.95", "insertproportion": "0.05", "requestdistribution": "zipfian",
			"maxscanlength": "100", "scanlengthdistribution": "uniform"},
		"workloadf": {"readproportion": "0.5", "updateproportion": "0", "scanproportion": "0", "insertproportion": "0", "readmodifywriteproportion": "0.5", "requestdistribution": "zipfian"},
		"workloadg": {"readproportion": "0.6", "updateproportion": "0.2", "insertproportion": "0.2", "scanproportion": "0", "requestdistribution": "zipfian"},
	}
	for name, want := range tests {
		t.Run(name, func(t *testing.T) {
			p := parse(t, name)
			for k, v := range common {
				assert.Equal(t, v, p.String(k, "<unset>"), k)
			}
			for k, v := range want {
				assert.Equal(t, v, p.String(k, "<unset>"), k)
			}
			assert.Len(t, p.Keys(), len(common)+len(want), "no other settings: %v", p.Keys())
			_, err := workload.ParseConfig(p)
			assert.NoError(t, err)
		})
	}
}

func TestComparison2014(t *testing.T) {
	shape := map[string]string{"fieldcount": "10", "fieldlength": "10", "zeropadding": "19", "readallfields": "true",
		"recordcount": "100000000", "workload": "site.ycsb.workloads.CoreWorkload"}
	tests := map[string]map[string]string{
		"comparison2014-load":            {"operationcount": "0"},
		"comparison2014-bulkload":        {"operationcount": "0", "batchsize": "3000"},
		"comparison2014-read":            {"readproportion": "1", "updateproportion": "0", "insertproportion": "0", "requestdistribution": "zipfian"},
		"comparison2014-insertread":      {"readproportion": "0.5", "updateproportion": "0", "insertproportion": "0.5", "requestdistribution": "zipfian"},
		"comparison2014-update":          {"readproportion": "0.05", "updateproportion": "0.95", "insertproportion": "0", "requestdistribution": "zipfian"},
		"comparison2014-readmostly":      {"readproportion": "0.95", "updateproportion": "0.05", "insertproportion": "0", "requestdistribution": "zipfian"},
		"comparison2014-readlatest":      {"readproportion": "0.95", "updateproportion": "0", "insertproportion": "0.05", "requestdistribution": "latest"},
		"comparison2014-scan":            {"scanproportion": "0.95", "insertproportion": "0.05", "maxscanlength": "100", "requestdistribution": "zipfian"},
		"comparison2014-readmodifywrite": {"readproportion": "0.5", "readmodifywriteproportion": "0.5", "requestdistribution": "zipfian"},
	}
	for name, want := range tests {
		t.Run(name, func(t *testing.T) {
			p := parse(t, name)
			for k, v := range shape {
				assert.Equal(t, v, p.String(k, "<unset>"), k)
			}
			for k, v := range want {
				assert.Equal(t, v, p.String(k, "<unset>"), k)
			}
			c, err := workload.ParseConfig(p)
			require.NoError(t, err)
			// 23-byte keys: "user" + 19 digits; 100-byte records.
			assert.Equal(t, 19, c.ZeroPadding)
			assert.Equal(t, int64(100), int64(c.FieldCount)*c.FieldLength)
		})
	}
}
