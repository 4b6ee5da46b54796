// Package slowclose registers the test-only adapter "slowclose": the basic
// no-op database with a Close that takes slowclose.ms, like a driver that
// drains its connections before it returns. Tests of how an agent ends a
// run (and when it is free again) import it for its side effect.
package slowclose

import (
	"context"
	"time"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/adapters/basic"
	"github.com/ycsbctl/ycsbctl/internal/properties"
)

// Name is the adapter's name; PropCloseMs how long its Close takes.
const (
	Name        = "slowclose"
	PropCloseMs = "slowclose.ms"
)

func init() {
	adapters.Register(adapters.Info{
		Name:        Name,
		Description: "test only: basic, with a Close that takes slowclose.ms",
		Properties: []properties.Known{
			{Name: PropCloseMs, Default: "0", Help: "milliseconds Close takes"},
			{Name: basic.PropVerbose, Default: "false", Help: "as basic"},
		},
		Driver: adapters.DriverFunc(open),
	})
}

func open(ctx context.Context, p *properties.Properties) (adapters.DB, error) {
	ms, err := p.Int64(PropCloseMs, 0)
	if err != nil {
		return nil, err
	}
	db, err := basic.Open(ctx, p)
	if err != nil {
		return nil, err
	}
	return &slowDB{DB: db, delay: time.Duration(ms) * time.Millisecond}, nil
}

type slowDB struct {
	adapters.DB
	delay time.Duration
}

func (d *slowDB) Close() error {
	time.Sleep(d.delay)
	if c, ok := d.DB.(adapters.Closer); ok {
		return c.Close()
	}
	return nil
}
