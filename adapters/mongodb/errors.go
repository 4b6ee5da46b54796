package mongodb

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/topology"

	"github.com/ycsbctl/ycsbctl/adapters"
)

// Server error codes that mean "the service cannot serve right now" rather
// than "this request is wrong" (MongoDB's error_codes.yml).
var unavailableCodes = []int{
	6,     // HostUnreachable
	7,     // HostNotFound
	89,    // NetworkTimeout
	91,    // ShutdownInProgress
	189,   // PrimarySteppedDown
	262,   // ExceededTimeLimit
	9001,  // SocketException
	10107, // NotWritablePrimary
	11600, // InterruptedAtShutdown
	11602, // InterruptedDueToReplStateChange
	13435, // NotPrimaryNoSecondaryOk
	13436, // NotPrimaryOrSecondary
}

const (
	codeUnauthorized         = 13
	codeAuthenticationFailed = 18
)

// classify maps a driver error to a YCSB status:
//   - no document: NOT_FOUND;
//   - duplicate key: ERROR (as YCSB, whose catch-all returns ERROR);
//   - deadline, network, server selection, shutdown/step-down: SERVICE_UNAVAILABLE,
//     so that an overloaded or dead server is told apart from bad requests;
//   - authorization failures: FORBIDDEN;
//   - anything else: ERROR.
func classify(err error) adapters.Status {
	if err == nil {
		return adapters.OK
	}
	if errors.Is(err, mongo.ErrNoDocuments) {
		return adapters.NotFound
	}
	if mongo.IsDuplicateKeyError(err) {
		return adapters.Error
	}
	if errors.Is(err, mongo.ErrClientDisconnected) {
		return adapters.Error // used after Close: a caller bug, not the server
	}
	var sse topology.ServerSelectionError
	if mongo.IsTimeout(err) || mongo.IsNetworkError(err) || errors.As(err, &sse) {
		return adapters.ServiceUnavailable
	}
	var se mongo.ServerError
	if errors.As(err, &se) {
		for _, c := range unavailableCodes {
			if se.HasErrorCode(c) {
				return adapters.ServiceUnavailable
			}
		}
		if se.HasErrorCode(codeUnauthorized) || se.HasErrorCode(codeAuthenticationFailed) {
			return adapters.Forbidden
		}
	}
	return adapters.Error
}

// status classifies err and logs failures (rate-limited, credentials
// scrubbed). parent is the caller's context: when the caller itself gave up
// (end of run, interrupt) the failure is ours to ignore, not the server's,
// so it is an ERROR rather than SERVICE_UNAVAILABLE.
func (d *DB) status(parent context.Context, op string, err error) adapters.Status {
	st := classify(err)
	if st == adapters.ServiceUnavailable && parent.Err() != nil {
		st = adapters.Error
	}
	if st != adapters.OK && st != adapters.NotFound {
		d.errLog.log(d.cfg, op, st, err)
	}
	return st
}

// errLog prints at most one failure per second, with the number of
// failures it kept quiet about: a dead server must not flood the console
// (YCSB prints every single one), yet the first cause must be visible.
type errLog struct {
	last       atomic.Int64
	suppressed atomic.Int64
}

func (l *errLog) log(c *config, op string, st adapters.Status, err error) {
	now := time.Now().UnixNano()
	last := l.last.Load()
	if (last != 0 && now-last < int64(time.Second)) || !l.last.CompareAndSwap(last, now) {
		l.suppressed.Add(1)
		return
	}
	slog.Warn("mongodb: operation failed",
		"op", op, "status", st.String(), "error", c.scrub(err.Error()),
		"suppressed", l.suppressed.Swap(0))
}
