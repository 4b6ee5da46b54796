package hbase

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A daemon that has just started serves /jmx before it registers its
// HBase beans (the cluster's region servers did, for a few seconds): the
// reading fails with a reason, not an empty "JMX: " in the run's notes.
func TestReadWithoutBeansSaysWhy(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"beans":[]}`))
	}))
	defer srv.Close()
	in := &internals{client: srv.Client(), endpoints: []endpoint{{role: "regionserver", url: srv.URL + "/jmx"}}}
	_, err := in.Read(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no HBase beans yet at "+srv.URL+"/jmx")
}

// HBase 2.x has no bean with its version: the product is named from the
// configuration servlet's hbase.defaults.for.version (as HBase 2.6.4's
// master serves it), not left as a bare "HBase".
func TestProductVersionFromConf(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/conf" && r.URL.Query().Get("format") == "json":
			_, _ = w.Write([]byte(`{"properties":[{"key":"yarn.admin.acl","value":"*","isFinal":false,"resource":"yarn-default.xml"},` +
				`{"key":"hbase.defaults.for.version","value":"2.6.4","isFinal":false,"resource":"hbase-default.xml"}]}`))
		case r.URL.Query().Get("qry") == "Hadoop:service=HBase,name=Master,sub=Server":
			_, _ = w.Write([]byte(`{"beans":[{"name":"Hadoop:service=HBase,name=Master,sub=Server","tag.isActiveMaster":"true","numRegionServers":1}]}`))
		case r.URL.Query().Get("qry") == "Hadoop:service=HBase,name=RegionServer,sub=Server":
			_, _ = w.Write([]byte(`{"beans":[{"name":"Hadoop:service=HBase,name=RegionServer,sub=Server","tag.Context":"regionserver"}]}`))
		default:
			_, _ = w.Write([]byte(`{"beans":[]}`))
		}
	}))
	defer srv.Close()
	in := &internals{client: srv.Client(), endpoints: []endpoint{{role: "master", url: srv.URL + "/jmx"}}}
	r, err := in.Read(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "HBase 2.6.4", r.Product)
}
