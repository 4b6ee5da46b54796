package adapters_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/ycsbctl/ycsbctl/adapters"
	_ "github.com/ycsbctl/ycsbctl/adapters/all"
	"github.com/ycsbctl/ycsbctl/internal/properties"
)

// unreachable are properties under which each adapter's Open, once its
// properties pass, fails fast on a closed local port: the endpoint
// itself is not mutated (a mutated host name would wait on DNS).
var unreachable = map[string]map[string]string{
	"basic":     {"basicdb.verbose": "false"},
	"embedded":  {},
	"cassandra": {"hosts": "127.0.0.1", "port": "1", "cassandra.connecttimeoutmillis": "200"},
	"hbase":     {"hbase.zookeeper.quorum": "127.0.0.1:1", "columnfamily": "family", "hbase.timeout": "200"},
	"mongodb":   {"mongodb.url": "mongodb://127.0.0.1:1/ycsb", "mongodb.connecttimeout": "200"},
}

// local adapters open without a server: there Check must also take
// whatever Open takes.
var local = map[string]bool{"basic": true, "embedded": true}

// TestCheckRefusesWhatOpenRefuses is the class of a suite whose dry run
// passed a value its step's Open then refused, after earlier steps ran
// (basicdb.simulatedelay: 1.5): for every adapter and every property it
// declares, a bad value that Open refuses as a property error is refused
// by Check, which opens nothing. Every adapter has a Check. (It found
// mongodb.maxconnections=99999999999999 panicking in the driver's Open.)
func TestCheckRefusesWhatOpenRefuses(t *testing.T) {
	bad := []string{"nope", "1.5", "-1", "0", "99999999999999", ""}
	var wg sync.WaitGroup
	for _, name := range adapters.Names() {
		info, err := adapters.Lookup(name)
		if err != nil || info.Name != name {
			continue // an alias
		}
		if info.Check == nil {
			t.Errorf("%s has no Check: a suite cannot check its properties before it runs", name)
			continue
		}
		base, ok := unreachable[name]
		if !ok {
			t.Errorf("%s: add it to unreachable, with properties under which Open fails fast", name)
			continue
		}
		for _, k := range info.Properties {
			if _, endpoint := base[k.Name]; endpoint || k.Prefix || k.Name == "embedded.dir" {
				continue
			}
			for _, v := range bad {
				p := properties.New()
				for bk, bv := range base {
					p.Set(bk, bv)
				}
				if name == "embedded" {
					p.Set("embedded.dir", t.TempDir())
				}
				p.Set(k.Name, v)
				checkErr := info.CheckProperties(p)
				if checkErr != nil && !local[name] {
					continue // Open fails on the server anyway
				}
				// Opens mostly wait on a closed port: side by side.
				wg.Add(1)
				go func() {
					defer wg.Done()
					openErr := open(info, p)
					var pe *properties.Error
					if errors.As(openErr, &pe) && checkErr == nil {
						t.Errorf("%s %s=%q: Open refuses it (%v), Check passes it", name, k.Name, v, openErr)
					}
					if checkErr != nil && openErr == nil {
						t.Errorf("%s %s=%q: Check refuses what Open takes: %v", name, k.Name, v, checkErr)
					}
				}()
			}
		}
	}
	wg.Wait()
}

// open opens and closes the adapter, bounded: an unreachable server
// fails within the adapters' short timeouts.
func open(info *adapters.Info, p *properties.Properties) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	db, err := info.Driver.Open(ctx, p)
	if err != nil {
		return err
	}
	if c, ok := db.(adapters.Closer); ok {
		_ = c.Close()
	}
	return nil
}
