package cassandra

import (
	"context"
	"errors"
	"log"
	"net"
	"sync/atomic"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/ycsbctl/ycsbctl/adapters"
)

// fail maps an error to a YCSB status and logs it (rate-limited, so that a
// dead cluster does not flood stderr at thousands of ops per second).
func (d *DB) fail(op string, err error) adapters.Status {
	st := statusOf(err)
	d.errLog.printf("cassandra: %s failed (%s): %v", op, st, err)
	return st
}

// statusOf maps gocql and context errors to YCSB statuses: anything that
// means "the cluster could not serve this now" is SERVICE_UNAVAILABLE.
func statusOf(err error) adapters.Status {
	switch {
	case err == nil:
		return adapters.OK
	case errors.Is(err, gocql.ErrNotFound):
		return adapters.NotFound
	case errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, context.Canceled),
		errors.Is(err, gocql.ErrTimeoutNoResponse),
		errors.Is(err, gocql.ErrConnectionClosed),
		errors.Is(err, gocql.ErrNoConnections),
		errors.Is(err, gocql.ErrNoStreams),
		errors.Is(err, gocql.ErrSessionClosed),
		errors.Is(err, gocql.ErrUnavailable):
		return adapters.ServiceUnavailable
	}
	var re gocql.RequestError
	if errors.As(err, &re) {
		switch re.Code() {
		case gocql.ErrCodeUnavailable, gocql.ErrCodeOverloaded, gocql.ErrCodeBootstrapping,
			gocql.ErrCodeReadTimeout, gocql.ErrCodeWriteTimeout, gocql.ErrCodeTruncate:
			return adapters.ServiceUnavailable
		case gocql.ErrCodeSyntax, gocql.ErrCodeInvalid, gocql.ErrCodeConfig:
			return adapters.BadRequest
		case gocql.ErrCodeCredentials, gocql.ErrCodeUnauthorized:
			return adapters.Forbidden
		}
		return adapters.Error
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return adapters.ServiceUnavailable
	}
	return adapters.Error
}

// errLimiter prints at most one message per interval and counts the rest.
type errLimiter struct {
	last       atomic.Int64
	suppressed atomic.Int64
}

const errLogInterval = 10 * time.Second

func (l *errLimiter) printf(format string, args ...interface{}) {
	now := time.Now().UnixNano()
	last := l.last.Load()
	if now-last < int64(errLogInterval) || !l.last.CompareAndSwap(last, now) {
		l.suppressed.Add(1)
		return
	}
	if n := l.suppressed.Swap(0); n > 0 {
		format += " (%d similar errors not shown)"
		args = append(args, n)
	}
	log.Printf(format, args...)
}
