package coordinator

import (
	"github.com/ycsbctl/ycsbctl/internal/environ"
)

// environment is what the agents told of the run's environment after the
// record started: each agent's machine as it described itself in its
// Hello reply, and the database as agent 0 described it once its database
// was open. End records it; a bundle rebuilt from the spool after a
// coordinator crash does not have it.
func (c *Coordinator) environment() ([]environ.Host, *environ.Database) {
	var hosts []environ.Host
	var db *environ.Database
	for _, a := range c.agents {
		h := environ.Host{Address: a.addr, Hostname: a.hostname, Errors: []string{"the agent sent no description of its host"}}
		if a.host != nil {
			h = *a.host
		}
		hosts = append(hosts, h)
		if db == nil && a.db != nil {
			db = a.db
		}
	}
	return hosts, db
}
