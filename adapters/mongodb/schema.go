package mongodb

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/ycsbctl/ycsbctl/internal/properties"
)

const (
	codeAlreadyInitialized = 23 // enableSharding/shardCollection done before (older servers)
	codeNamespaceExists    = 48 // createCollection of an existing collection
	codeCommandNotFound    = 59
)

// CreateSchema creates the collection (idempotent). Against a mongos it also
// enables sharding for the database and shards the collection on a hashed
// _id, so that YCSB's sequential inserts spread over all shards;
// mongodb.shard.initialchunks sets numInitialChunks.
func (d *DB) CreateSchema(ctx context.Context, p *properties.Properties) (string, error) {
	table, chunks, err := d.schemaProps(p)
	if err != nil {
		return "", err
	}
	stopBalancer := d.cfg.stopBalancer
	if p != nil {
		if stopBalancer, err = parseStopBalancer(p, d.cfg.stopBalancer); err != nil {
			return "", err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, d.adminTimeout())
	defer cancel()
	ns := d.cfg.database + "." + table
	var did []string

	mongos, err := d.isMongos(ctx)
	if err != nil {
		return "", d.schemaErr("hello", err)
	}
	admin := d.client.Database("admin")
	if stopBalancer {
		if !mongos {
			did = append(did, propBalancer+"=false not applied: the server is not a mongos (no balancer)")
		} else if err := admin.RunCommand(ctx, balancerStopCmd()).Err(); err != nil {
			return "", d.schemaErr("balancerStop", err)
		} else {
			did = append(did, "stopped the balancer")
		}
	}
	if chunks > 0 && !mongos {
		did = append(did, fmt.Sprintf("%s=%d not applied: the server is not a mongos", propInitChunks, chunks))
	}
	if mongos {
		err := admin.RunCommand(ctx, enableShardingCmd(d.cfg.database)).Err()
		switch {
		case err == nil:
			did = append(did, "enabled sharding for database "+d.cfg.database)
		case hasCode(err, codeAlreadyInitialized):
			did = append(did, "sharding was already enabled for database "+d.cfg.database)
		default:
			return "", d.schemaErr("enableSharding", err)
		}
	}

	switch err := d.db.CreateCollection(ctx, table); {
	case err == nil:
		did = append(did, "created collection "+ns)
	case hasCode(err, codeNamespaceExists):
		did = append(did, "collection "+ns+" already exists")
	default:
		return "", d.schemaErr("create", err)
	}

	if mongos {
		sharded, err := d.isSharded(ctx, ns)
		if err != nil {
			return "", d.schemaErr("read config.collections", err)
		}
		if sharded {
			did = append(did, "collection "+ns+" is already sharded; left as is")
		} else {
			// numInitialChunks is only accepted for an empty collection.
			if chunks > 0 {
				n, err := d.db.Collection(table).EstimatedDocumentCount(ctx)
				if err != nil {
					return "", d.schemaErr("count", err)
				}
				if n > 0 {
					did = append(did, fmt.Sprintf("collection holds ~%d documents, so %s=%d is not applied", n, propInitChunks, chunks))
					chunks = 0
				}
			}
			err := admin.RunCommand(ctx, shardCollectionCmd(d.cfg.database, table, chunks)).Err()
			switch {
			case err == nil:
				msg := "sharded " + ns + " on {_id: \"hashed\"}"
				if chunks > 0 {
					msg += fmt.Sprintf(" with %d initial chunks", chunks)
				}
				did = append(did, msg)
			case hasCode(err, codeAlreadyInitialized):
				did = append(did, "collection "+ns+" is already sharded")
			default:
				return "", d.schemaErr("shardCollection", err)
			}
		}
	}
	return "mongodb: " + strings.Join(did, "; "), nil
}

// DropSchema drops the collection (idempotent; on a mongos this also
// removes its sharding metadata).
func (d *DB) DropSchema(ctx context.Context, p *properties.Properties) (string, error) {
	table, _, err := d.schemaProps(p)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, d.adminTimeout())
	defer cancel()
	ns := d.cfg.database + "." + table
	names, err := d.db.ListCollectionNames(ctx, bson.D{{Key: "name", Value: table}})
	if err != nil {
		return "", d.schemaErr("listCollections", err)
	}
	if len(names) == 0 {
		return "mongodb: collection " + ns + " does not exist; nothing to drop", nil
	}
	if err := d.db.Collection(table).Drop(ctx); err != nil {
		return "", d.schemaErr("drop", err)
	}
	return "mongodb: dropped collection " + ns, nil
}

// schemaProps reads the table and initial chunks from p, falling back to
// the values given at Open.
func (d *DB) schemaProps(p *properties.Properties) (string, int32, error) {
	if p == nil {
		return d.cfg.table, d.cfg.initialChunks, nil
	}
	table, err := parseTable(p, d.cfg.table)
	if err != nil {
		return "", 0, err
	}
	chunks, err := parseInitialChunks(p, d.cfg.initialChunks)
	if err != nil {
		return "", 0, err
	}
	return table, chunks, nil
}

func (d *DB) schemaErr(step string, err error) error {
	return fmt.Errorf("mongodb: %s on %s (database %s): %s", step, d.cfg.redactedURL, d.cfg.database, d.cfg.scrub(err.Error()))
}

// helloReply is the part of the hello/isMaster reply we need.
type helloReply struct {
	Msg string `bson:"msg"`
}

// isMongos reports whether the server is a mongos, which answers hello
// with msg "isdbgrid". Servers before 4.4.2 lack hello; they get isMaster.
func (d *DB) isMongos(ctx context.Context) (bool, error) {
	admin := d.client.Database("admin")
	var r helloReply
	err := admin.RunCommand(ctx, bson.D{{Key: "hello", Value: 1}}).Decode(&r)
	if hasCode(err, codeCommandNotFound) {
		err = admin.RunCommand(ctx, bson.D{{Key: "isMaster", Value: 1}}).Decode(&r)
	}
	if err != nil {
		return false, err
	}
	return isMongosReply(r), nil
}

func isMongosReply(r helloReply) bool { return r.Msg == "isdbgrid" }

// isSharded looks the namespace up in config.collections; entries marked
// dropped (left behind by servers before 5.0) do not count.
func (d *DB) isSharded(ctx context.Context, ns string) (bool, error) {
	var entry struct {
		Dropped bool `bson:"dropped"`
	}
	err := d.client.Database("config").Collection("collections").
		FindOne(ctx, bson.D{{Key: "_id", Value: ns}}).Decode(&entry)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return !entry.Dropped, nil
}

// balancerStopCmd is {balancerStop: 1}, run on the admin database of a
// mongos (MongoDB >= 3.4): it waits until any migration in progress ends.
func balancerStopCmd() bson.D {
	return bson.D{{Key: "balancerStop", Value: 1}}
}

// enableShardingCmd is {enableSharding: db}, run against admin. Since
// MongoDB 6.0 it is implied by shardCollection, but older servers need it.
func enableShardingCmd(db string) bson.D {
	return bson.D{{Key: "enableSharding", Value: db}}
}

// shardCollectionCmd is {shardCollection: "db.coll", key: {_id: "hashed"}
// [, numInitialChunks: n]}, run against admin. Hashed _id spreads YCSB's
// keys evenly and avoids a single hot chunk during the load phase.
func shardCollectionCmd(db, coll string, chunks int32) bson.D {
	cmd := bson.D{
		{Key: "shardCollection", Value: db + "." + coll},
		{Key: "key", Value: bson.D{{Key: "_id", Value: "hashed"}}},
	}
	if chunks > 0 {
		cmd = append(cmd, bson.E{Key: "numInitialChunks", Value: chunks})
	}
	return cmd
}

func hasCode(err error, code int) bool {
	var se mongo.ServerError
	return err != nil && errors.As(err, &se) && se.HasErrorCode(code)
}
