//go:build integration

package integration

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// serverEvent is one servers.sh start or stop this test binary ran.
type serverEvent struct {
	test, action, db string
	took             time.Duration
	failed           bool
	retries          []string
}

// serverEvents is the binary's account of its server starts and stops:
// where the integration tests' time goes on servers (a start costs tens of
// seconds, so a server stopped by one test and started again by the next
// is paid twice) and every retry a start needed. Callers hold serversMu.
type serverEvents []serverEvent

func (e *serverEvents) add(test, action, db string, r scriptRun) {
	*e = append(*e, serverEvent{test: test, action: action, db: db, took: r.took, failed: r.err != nil, retries: r.retries()})
}

// print writes the account, every line prefixed "integration: " so that
// make integration's filter keeps it.
func (e serverEvents) print(w io.Writer) {
	if len(e) == 0 {
		return
	}
	type total struct {
		starts, retried int
		took            time.Duration
	}
	totals := map[string]*total{}
	_, _ = fmt.Fprintln(w, "integration: server starts and stops, in order:")
	for _, ev := range e {
		mark := ""
		if ev.failed {
			mark = " FAILED"
		}
		_, _ = fmt.Fprintf(w, "integration:   %-5s %-9s %7.1fs  %s%s\n", ev.action, ev.db, ev.took.Seconds(), ev.test, mark)
		for _, l := range ev.retries {
			_, _ = fmt.Fprintf(w, "integration:     %s\n", l)
		}
		if totals[ev.db] == nil {
			totals[ev.db] = &total{}
		}
		tt := totals[ev.db]
		tt.took += ev.took
		if ev.action == "start" {
			tt.starts++
			if len(ev.retries) > 0 {
				tt.retried++
			}
		}
	}
	dbs := make([]string, 0, len(totals))
	for db := range totals {
		dbs = append(dbs, db)
	}
	sort.Strings(dbs)
	var parts []string
	var all time.Duration
	for _, db := range dbs {
		tt := totals[db]
		all += tt.took
		parts = append(parts, fmt.Sprintf("%s %d starts (%d retried) %.0fs", db, tt.starts, tt.retried, tt.took.Seconds()))
	}
	_, _ = fmt.Fprintf(w, "integration: servers took %.0fs in all: %s\n", all.Seconds(), strings.Join(parts, ", "))
}

// hbaseIn runs servers.sh ACTION hbase with an install directory of its
// own, as a fresh clone has.
func hbaseIn(dir, action string) scriptRun {
	return runServersEnv([]string{"YCSBCTL_SERVERS_DIR=" + dir}, action, "hbase", serverStartTimeout)
}

// stopHBaseIn stops the HBase of dir by its recorded PID (servers.sh stop
// signals only that PID) and checks that the process is gone.
func stopHBaseIn(t *testing.T, dir string) {
	pid := readPID(filepath.Join(dir, "hbase", "hbase.pid"))
	r := hbaseIn(dir, "stop")
	assert.NoError(t, r.err)
	if pid > 0 {
		_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
		assert.True(t, os.IsNotExist(err), "HBase pid %d still running after servers.sh stop", pid)
	}
}

func readPID(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// lastLines is the end of a script's output, for a failure's message.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
