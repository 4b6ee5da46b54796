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
