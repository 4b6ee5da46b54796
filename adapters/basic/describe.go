package basic

import (
	"context"
	"strconv"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/environ"
)

var _ adapters.Describer = (*DB)(nil)

// Describe implements adapters.Describer: there is no server, only the
// simulated latency.
func (db *DB) Describe(context.Context) (*environ.Database, error) {
	return &environ.Database{Product: "BasicDB (no database: operations return at once or after the simulated delay)",
		Schema: []environ.Setting{
			{Name: PropSimulatedDelay, Value: strconv.FormatInt(db.delay.Milliseconds(), 10)},
			{Name: PropRandomizeDelay, Value: strconv.FormatBool(db.randomize)},
			{Name: PropSlots, Value: strconv.Itoa(db.slots())},
		}}, nil
}

// slots is how many slots the simulated server has (0: none).
func (db *DB) slots() int {
	if db.server == nil {
		return 0
	}
	return len(db.server.free)
}
