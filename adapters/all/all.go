// Package all links every database binding into the binary; importing it
// registers them.
package all

import (
	_ "github.com/ycsbctl/ycsbctl/adapters/basic"
	_ "github.com/ycsbctl/ycsbctl/adapters/cassandra"
	_ "github.com/ycsbctl/ycsbctl/adapters/embedded"
	_ "github.com/ycsbctl/ycsbctl/adapters/hbase"
	_ "github.com/ycsbctl/ycsbctl/adapters/mongodb"
)
