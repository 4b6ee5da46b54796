package mongodb

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/environ"
)

var _ adapters.Describer = (*DB)(nil)

// Describe implements adapters.Describer: buildInfo's version, the
// topology the server reports (a mongos' shards, a replica set's members,
// else one standalone server), and the collection as created: its
// options, its shard key and its indexes.
func (d *DB) Describe(ctx context.Context) (*environ.Database, error) {
	out := &environ.Database{Product: "MongoDB"}
	admin := d.client.Database("admin")
	var bi bson.M
	if err := admin.RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Decode(&bi); err != nil {
		return out, fmt.Errorf("buildInfo: %s", d.cfg.scrub(err.Error()))
	}
	out.Version = fmt.Sprint(bi["version"])
	if fv, ok := bi["ferretdbVersion"]; ok {
		// FerretDB answers as MongoDB with its own version beside.
		out.Product = fmt.Sprintf("FerretDB %v (MongoDB wire protocol)", fv)
	}
	var problems []string
	var hello bson.M
	if err := admin.RunCommand(ctx, bson.D{{Key: "hello", Value: 1}}).Decode(&hello); err != nil {
		problems = append(problems, "hello: "+d.cfg.scrub(err.Error()))
	}
	switch {
	case hello["msg"] == "isdbgrid":
		out.Nodes = append(out.Nodes, environ.Node{Address: fmt.Sprint(hello["me"]), Role: "mongos"})
		if err := d.shards(ctx, out); err != nil {
			problems = append(problems, "listShards: "+err.Error())
		}
	case hello["setName"] != nil:
		if err := d.members(ctx, out); err != nil {
			problems = append(problems, "replSetGetStatus: "+err.Error())
		}
	default:
		addr := strings.Join(d.cfg.cs.Hosts, ",")
		out.Nodes = append(out.Nodes, environ.Node{Address: addr, Role: "standalone", Status: "up"})
	}
	if err := d.collectionSchema(ctx, out); err != nil {
		problems = append(problems, "collection: "+err.Error())
	}
	out.Error = strings.Join(problems, "; ")
	return out, nil
}

func (d *DB) shards(ctx context.Context, out *environ.Database) error {
	var r struct {
		Shards []struct {
			ID    string `bson:"_id"`
			Host  string `bson:"host"`
			State int    `bson:"state"`
		} `bson:"shards"`
	}
	if err := d.client.Database("admin").RunCommand(ctx, bson.D{{Key: "listShards", Value: 1}}).Decode(&r); err != nil {
		return fmt.Errorf("%s", d.cfg.scrub(err.Error()))
	}
	for _, s := range r.Shards {
		st := "not shard-aware"
		if s.State == 1 {
			st = "shard-aware"
		}
		out.Nodes = append(out.Nodes, environ.Node{Address: s.Host, Role: "shard " + s.ID, Status: st})
	}
	return nil
}

func (d *DB) members(ctx context.Context, out *environ.Database) error {
	var r struct {
		Set     string `bson:"set"`
		Members []struct {
			Name     string  `bson:"name"`
			StateStr string  `bson:"stateStr"`
			Health   float64 `bson:"health"`
		} `bson:"members"`
	}
	if err := d.client.Database("admin").RunCommand(ctx, bson.D{{Key: "replSetGetStatus", Value: 1}}).Decode(&r); err != nil {
		return fmt.Errorf("%s", d.cfg.scrub(err.Error()))
	}
	for _, m := range r.Members {
		st := "healthy"
		if m.Health == 0 {
			st = "unhealthy"
		}
		out.Nodes = append(out.Nodes, environ.Node{Address: m.Name, Role: m.StateStr, Status: st, Detail: "replica set " + r.Set})
	}
	return nil
}

// collectionSchema adds the collection's options, shard key and indexes.
func (d *DB) collectionSchema(ctx context.Context, out *environ.Database) error {
	ns := d.cfg.database + "." + d.cfg.table
	specs, err := d.db.ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: d.cfg.table}})
	if err != nil {
		return fmt.Errorf("%s", d.cfg.scrub(err.Error()))
	}
	if len(specs) == 0 {
		out.Schema = append(out.Schema, environ.Setting{Name: "collection " + ns, Value: "does not exist"})
		return nil
	}
	opts := "{}"
	if len(specs[0].Options) > 0 {
		opts = specs[0].Options.String()
	}
	out.Schema = append(out.Schema, environ.Setting{Name: "collection " + ns + " options", Value: opts})
	var entry bson.M
	err = d.client.Database("config").Collection("collections").FindOne(ctx, bson.D{{Key: "_id", Value: ns}}).Decode(&entry)
	switch {
	case err == nil && entry["dropped"] != true:
		out.Schema = append(out.Schema, environ.Setting{Name: "collection " + ns + " shard key", Value: fmt.Sprint(entry["key"])})
	default:
		// No config database (not a mongos) or no entry: not sharded.
		out.Schema = append(out.Schema, environ.Setting{Name: "collection " + ns + " sharding", Value: "not sharded"})
	}
	cur, err := d.db.Collection(d.cfg.table).Indexes().ListSpecifications(ctx)
	if err != nil {
		return fmt.Errorf("%s", d.cfg.scrub(err.Error()))
	}
	var idx []string
	for _, s := range cur {
		idx = append(idx, s.Name+" "+s.KeysDocument.String())
	}
	sort.Strings(idx)
	out.Schema = append(out.Schema, environ.Setting{Name: "collection " + ns + " indexes", Value: strings.Join(idx, "; ")})
	return nil
}
