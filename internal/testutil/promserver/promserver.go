// Package promserver runs a real Prometheus server as a test's child and
// reads what it stored through its HTTP API. The loopback integration test
// and the cluster test both check that what Prometheus shows of a run adds
// up to run.json; they share the server's life cycle, the query client and
// the one subtle query (an increase() that is exact) from here.
package promserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Server is one Prometheus process listening on a loopback address.
type Server struct {
	Base string // http://host:port
	log  *syncBuffer
}

// Start runs bin with config on addr (host:port on loopback), its own data
// directory and flags, and waits until it is ready. It is killed by its own
// PID, never by name, when the test ends.
func Start(t testing.TB, bin, config, addr string, flags ...string) *Server {
	t.Helper()
	args := append([]string{"--config.file=" + config, "--storage.tsdb.path=" + t.TempDir(),
		"--web.listen-address=" + addr, "--log.level=warn"}, flags...)
	cmd := exec.Command(bin, args...)
	s := &Server{Base: "http://" + addr, log: &syncBuffer{}}
	cmd.Stdout, cmd.Stderr = s.log, s.log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	for deadline := time.Now().Add(time.Minute); ; {
		if resp, err := http.Get(s.Base + "/-/ready"); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		select {
		case <-exited:
			t.Fatalf("prometheus %v exited:\n%s", args, s.log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus on %s not ready after a minute:\n%s", addr, s.log.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Sample is one stored value at its timestamp (Unix seconds).
type Sample struct{ TS, V float64 }

// Series is one labelled series of a query's result.
type Series struct {
	Labels  map[string]string
	Samples []Sample
}

// Query runs an instant query at ts (Unix seconds, millisecond precision)
// and returns the vector or matrix it gave.
func (s *Server) Query(t testing.TB, q string, ts float64) []Series {
	t.Helper()
	v := url.Values{"query": {q}, "time": {strconv.FormatFloat(ts, 'f', 3, 64)}}
	resp, err := http.Get(s.Base + "/api/v1/query?" + v.Encode())
	if err != nil {
		t.Fatalf("query %s: %v", q, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("query %s: %v", q, err)
	}
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  []any             `json:"value"`
				Values [][]any           `json:"values"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil || r.Status != "success" {
		t.Fatalf("query %s: %v %s %s", q, err, r.Error, body)
	}
	conv := func(pair []any) Sample {
		ts, _ := pair[0].(float64)
		str, _ := pair[1].(string)
		f, err := strconv.ParseFloat(str, 64)
		if err != nil {
			t.Fatalf("query %s: sample %v", q, pair)
		}
		return Sample{ts, f}
	}
	var out []Series
	for _, res := range r.Data.Result {
		sr := Series{Labels: res.Metric}
		if res.Value != nil {
			sr.Samples = append(sr.Samples, conv(res.Value))
		}
		for _, pair := range res.Values {
			sr.Samples = append(sr.Samples, conv(pair))
		}
		out = append(out, sr)
	}
	return out
}

// Scalar runs a query that must return exactly one sample.
func (s *Server) Scalar(t testing.TB, q string, ts float64) float64 {
	t.Helper()
	res := s.Query(t, q, ts)
	if len(res) != 1 || len(res[0].Samples) != 1 {
		t.Fatalf("query %s at %.3f: %d series, want one sample", q, ts, len(res))
	}
	return res[0].Samples[0].V
}

// ExactIncrease is sum(increase(metric{sel}[window])) computed so that it
// is exact, for counters whose series were first scraped at 0 (check that
// on series, the raw samples of the same selector). increase() is
// (last - first) scaled by how far the range reaches past the samples: a
// first sample of 0 is not extrapolated back (a counter never goes below
// zero), and evaluated at the instant of an instance's own last scrape
// there is nothing to extrapolate forward. So each instance's sum is
// evaluated at its own last scrape, and the instances are added. It
// returns the total and how many instances it added.
func (s *Server) ExactIncrease(t testing.TB, metric, sel, window string, series []Series) (float64, int) {
	t.Helper()
	last := map[string]float64{}
	for _, sr := range series {
		if len(sr.Samples) == 0 {
			continue
		}
		inst := sr.Labels["instance"]
		last[inst] = max(last[inst], sr.Samples[len(sr.Samples)-1].TS)
	}
	var sum float64
	for inst, ts := range last {
		sum += s.Scalar(t, fmt.Sprintf(`sum(increase(%s{%s,instance=%q}[%s]))`, metric, sel, inst, window), ts)
	}
	return sum, len(last)
}

// syncBuffer collects the server's output for failure messages; the
// process writes it from its own goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
