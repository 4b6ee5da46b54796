package adapters

import (
	"context"
	"fmt"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/environ"
)

// Describer is implemented by bindings that can say what they run
// against: the server's product and version, its topology, and the
// benchmark schema as created (table of the run's properties). It reads
// the server only; a run records the description in its bundle.
type Describer interface {
	Describe(ctx context.Context) (*environ.Database, error)
}

// DescribeTimeout bounds a description: it is an appendix, and a run
// never waits long for it.
const DescribeTimeout = 20 * time.Second

// Describe describes db's server for adapter name. It never fails: a
// binding without the capability, an error or a timeout is recorded in
// the description's Error, and a description that hangs is abandoned
// (the binding's call goes on in the background until its own deadline).
func Describe(ctx context.Context, name string, db DB) environ.Database {
	d, ok := db.(Describer)
	if !ok {
		return environ.Database{Adapter: name, Error: "this adapter cannot describe its server"}
	}
	ctx, cancel := context.WithTimeout(ctx, DescribeTimeout)
	defer cancel()
	type result struct {
		d   *environ.Database
		err error
	}
	done := make(chan result, 1)
	go func() {
		desc, err := d.Describe(ctx)
		done <- result{desc, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		r.err = fmt.Errorf("no answer within %s", DescribeTimeout)
	}
	out := environ.Database{}
	if r.d != nil {
		out = *r.d
	}
	out.Adapter = name
	if r.err != nil {
		msg := "describing the server: " + r.err.Error()
		if out.Error != "" {
			msg = out.Error + "; " + msg
		}
		out.Error = msg
	}
	return out
}
