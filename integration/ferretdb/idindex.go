package main

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite" // database/sql driver "sqlite" (FerretDB links it anyway)
)

// FerretDB v1's SQLite backend looks documents up by _id with the
// expression _ferretdb_sjson->'$._id', but its own unique _id index is on
// _ferretdb_sjson->"_id", which SQLite does not consider the same
// expression. Every point read, update and delete is therefore a full
// table scan, with 16 clients far slower than the tests' timeouts, while
// MongoDB always serves _id lookups from an index.
//
// indexIDs closes that gap for the test stand-in: it watches the data
// directory and adds an index on the expression FerretDB queries to every
// collection table. It only adds indexes (FerretDB ignores indexes it does
// not know about) and polls, because the wrapper cannot hook collection
// creation. Scans ($gte on _id, sorted) are not pushed down by FerretDB v1
// and stay full-collection reads.
func indexIDs(ctx context.Context, dir string, every time.Duration, log *slog.Logger) {
	dbs := map[string]*sql.DB{}
	defer func() {
		for _, db := range dbs {
			_ = db.Close()
		}
	}()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.sqlite"))
		seen := map[string]bool{}
		for _, f := range files {
			seen[f] = true
			db := dbs[f]
			if db == nil {
				var err error
				u := (&url.URL{Scheme: "file", Path: f, RawQuery: "_pragma=busy_timeout(10000)"}).String()
				if db, err = sql.Open("sqlite", u); err != nil {
					log.Warn("id index: open", "file", f, "err", err)
					continue
				}
				db.SetMaxOpenConns(1)
				dbs[f] = db
			}
			if err := indexFile(ctx, db); err != nil && ctx.Err() == nil {
				log.Debug("id index", "file", f, "err", err)
			}
		}
		// A dropped database removes its file: let go of it.
		for f, db := range dbs {
			if _, err := os.Stat(f); !seen[f] && err != nil {
				_ = db.Close()
				delete(dbs, f)
			}
		}
	}
}

const idIndexSuffix = "_ycsbctl_id"

// indexFile creates the missing _id expression indexes in one database.
func indexFile(ctx context.Context, db *sql.DB) error {
	tables, err := strings1(ctx, db, `SELECT table_name FROM _ferretdb_collections`)
	if err != nil {
		return err // e.g. the metadata table does not exist yet
	}
	if len(tables) == 0 {
		return nil
	}
	have, err := strings1(ctx, db, `SELECT tbl_name FROM sqlite_master WHERE type = 'index' AND name GLOB ?`, "*"+idIndexSuffix)
	if err != nil {
		return err
	}
	indexed := map[string]bool{}
	for _, t := range have {
		indexed[t] = true
	}
	for _, t := range tables {
		if indexed[t] {
			continue
		}
		q := fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %q ON %q (_ferretdb_sjson->'$._id')`, t+idIndexSuffix, t)
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
	}
	return nil
}

// strings1 returns the first column of a query's rows.
func strings1(ctx context.Context, db *sql.DB, q string, args ...any) ([]string, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
