// Command ferretdb runs FerretDB v1 (SQLite backend) as a MongoDB
// wire-protocol server for ycsbctl's integration tests.
//
// It is a stand-in for MongoDB only: FerretDB translates every query to SQL,
// so its throughput says nothing about MongoDB's.
//
// The stock cmd/ferretdb cannot be used when FerretDB is a dependency (it
// panics on a missing generated version file), so this wrapper embeds the
// package github.com/FerretDB/FerretDB/ferretdb instead. It lives in its own
// Go module so that FerretDB's large dependency graph stays out of the
// benchmark's go.mod.
//
// Usage:
//
//	ferretdb -listen 127.0.0.1:27017 -data-dir DIR   # serve until SIGTERM/SIGINT
//	         [-log-level warn] [-index-id=true]
//	ferretdb -ping mongodb://127.0.0.1:27017/ycsb    # exit 0 once the server answers
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
	"go.mongodb.org/mongo-driver/bson"
	"go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:27017", "TCP `address` to serve on (loopback only)")
	dataDir := flag.String("data-dir", "", "`directory` for the SQLite databases (required to serve)")
	logLevel := flag.String("log-level", "warn", "log `level`: debug, info, warn or error")
	indexID := flag.Bool("index-id", true, "add an index on the _id lookup expression to every collection (see idindex.go)")
	ping := flag.String("ping", "", "instead of serving, check that the server at this MongoDB `URI` answers, then exit")
	timeout := flag.Duration("timeout", 5*time.Second, "time limit of -ping")
	flag.Parse()

	if *ping != "" {
		if err := doPing(*ping, *timeout); err != nil {
			fmt.Fprintln(os.Stderr, "ferretdb -ping:", err)
			os.Exit(1)
		}
		return
	}
	if err := serve(*listen, *dataDir, *logLevel, *indexID); err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb:", err)
		os.Exit(1)
	}
}

func serve(listen, dataDir, logLevel string, indexID bool) error {
	if dataDir == "" {
		return errors.New("-data-dir is required")
	}
	// The tests run on a shared machine: refuse anything but loopback so a
	// typo cannot expose an unauthenticated server.
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return fmt.Errorf("-listen %q: %w", listen, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("-listen %q: only loopback IP addresses are allowed", listen)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(logLevel)); err != nil {
		return fmt.Errorf("-log-level %q: %w", logLevel, err)
	}
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return err
	}

	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	f, err := ferretdb.New(&ferretdb.Config{
		Listener: ferretdb.ListenerConfig{TCP: listen},
		Handler:  "sqlite",
		// FerretDB wants a file: URI naming a directory, with the trailing
		// slash; it keeps one SQLite file per MongoDB database there.
		SQLiteURL: (&url.URL{Scheme: "file", Path: abs + "/"}).String(),
		Logger:    logger,
	})
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if indexID {
		done := make(chan struct{})
		go func() { defer close(done); indexIDs(ctx, abs, 200*time.Millisecond, logger) }()
		defer func() { <-done }()
	}
	// Run returns once ctx is cancelled and every connection and the
	// backend are closed, so SQLite is checkpointed cleanly on SIGTERM.
	return f.Run(ctx)
}

// doPing connects with a real driver and runs commands that reach the
// storage backend, so "ready" means ready to serve, not just "port open".
func doPing(uri string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c, err := mongo.Connect(ctx, options.Client().ApplyURI(uri).
		SetServerSelectionTimeout(timeout).SetConnectTimeout(timeout))
	if err != nil {
		return err
	}
	defer func() {
		dctx, dcancel := context.WithTimeout(context.Background(), time.Second)
		defer dcancel()
		_ = c.Disconnect(dctx)
	}()
	if err := c.Database("admin").RunCommand(ctx, bson.D{{Key: "ping", Value: 1}}).Err(); err != nil {
		return err
	}
	// listCollections opens the SQLite database behind the name.
	db := "ycsb"
	if cs, err := url.Parse(uri); err == nil && len(cs.Path) > 1 {
		db = cs.Path[1:]
	}
	_, err = c.Database(db).ListCollectionNames(ctx, bson.D{})
	return err
}
