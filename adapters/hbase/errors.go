package hbase

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/region"

	"github.com/ycsbctl/ycsbctl/adapters"
)

// fail maps an error to a YCSB status and logs it, rate-limited.
func (d *DB) fail(op string, err error) adapters.Status {
	st := statusOf(err)
	d.errLog.printf("hbase: %s failed (%s): %v", op, st, err)
	return st
}

// statusOf maps gohbase errors to YCSB statuses: anything meaning "the
// cluster could not serve this now" is SERVICE_UNAVAILABLE.
func statusOf(err error) adapters.Status {
	if err == nil {
		return adapters.OK
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		errors.Is(err, gohbase.ErrClientClosed) || errors.Is(err, gohbase.ErrCannotFindRegion) {
		return adapters.ServiceUnavailable
	}
	switch err.(type) {
	case region.RetryableError, region.ServerError, region.NotServingRegionError:
		return adapters.ServiceUnavailable
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return adapters.ServiceUnavailable
	}
	if errors.Is(err, gohbase.TableNotFound) {
		return adapters.Error
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "NoSuchColumnFamilyException"):
		return adapters.BadRequest
	case strings.Contains(msg, "AccessDeniedException"):
		return adapters.Forbidden
	case strings.Contains(msg, "RegionTooBusyException"),
		strings.Contains(msg, "PleaseHoldException"),
		strings.Contains(msg, "ServerNotRunningYetException"),
		strings.Contains(msg, "CallQueueTooBigException"):
		return adapters.ServiceUnavailable
	}
	return adapters.Error
}

// errLimiter prints at most one message per interval and counts the rest,
// so a dead cluster does not flood stderr at thousands of ops per second.
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

// limitedWriter passes at most burst writes (log lines) per interval and
// then one note of how many were dropped.
type limitedWriter struct {
	mu      sync.Mutex
	w       io.Writer
	per     time.Duration
	burst   int
	start   time.Time
	n       int
	dropped int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if now.Sub(l.start) >= l.per {
		if l.dropped > 0 {
			if _, err := fmt.Fprintf(l.w, "gohbase: %d more log lines dropped\n", l.dropped); err != nil {
				return 0, err
			}
		}
		l.start, l.n, l.dropped = now, 0, 0
	}
	if l.n >= l.burst {
		l.dropped++
		return len(p), nil
	}
	l.n++
	return l.w.Write(p)
}
