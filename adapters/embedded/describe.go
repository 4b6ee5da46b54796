package embedded

import (
	"context"
	"runtime/debug"
	"strconv"

	"github.com/cockroachdb/pebble"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/environ"
)

var _ adapters.Describer = (*DB)(nil)

// Describe implements adapters.Describer: the Pebble store inside this
// process, its directory and options.
func (d *DB) Describe(context.Context) (*environ.Database, error) {
	out := &environ.Database{Product: "Pebble (embedded in ycsbctl)", Version: pebbleVersion(),
		Nodes: []environ.Node{{Address: d.dir, Role: "embedded store", Status: "open"}},
		Schema: []environ.Setting{
			{Name: PropSync, Value: strconv.FormatBool(d.wopts == pebble.Sync)},
			{Name: "block cache (bytes)", Value: strconv.FormatInt(d.cache.MaxSize(), 10)},
			{Name: "format major version", Value: d.db.FormatMajorVersion().String()},
		}}
	return out, nil
}

// pebbleVersion is the Pebble module version this binary was built with.
func pebbleVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, m := range bi.Deps {
		if m.Path == "github.com/cockroachdb/pebble" {
			return m.Version
		}
	}
	return ""
}
