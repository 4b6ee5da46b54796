package hlog_test

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/sink/hlog"
	"github.com/ycsbctl/ycsbctl/internal/testutil/tools"
)

type interval struct {
	tag        string
	start, end int64 // Unix ns
	h          *hdrhistogram.Histogram
}

// fixture returns three intervals of two tags with different shapes.
func fixture(start time.Time) []interval {
	s := start.UnixNano()
	mk := func(n, base, step int64) *hdrhistogram.Histogram {
		h := measurement.NewHistogram()
		for i := int64(0); i < n; i++ {
			if err := h.RecordValue(base + i*step); err != nil {
				panic(err)
			}
		}
		return h
	}
	return []interval{
		{"READ", s, s + 10e9, mk(1000, 50_000, 997)},
		{"UPDATE", s, s + 10e9, mk(500, 200_000, 12_345)},
		{"READ", s + 10e9, s + 20e9, mk(2000, 10_000, 4_321)},
		{"Intended-READ-FAILED", s + 10e9, s + 20e9, mk(3, 1_000_000_000, 1)},
		{"", s + 20e9, s + 25_500_000_000, mk(7, 1, 1)},
	}
}

func writeLog(t *testing.T, w io.Writer, start time.Time, ivs []interval) {
	t.Helper()
	lw := hlog.NewWriter(w, start)
	for _, iv := range ivs {
		require.NoError(t, lw.WriteInterval(iv.tag, iv.start, iv.end, iv.h))
	}
}

func TestLogReadBackWithHdrHistogramGo(t *testing.T) {
	start := time.Date(2026, 11, 5, 9, 0, 0, 250_000_000, time.UTC)
	ivs := fixture(start)
	var buf bytes.Buffer
	writeLog(t, &buf, start, ivs)
	text := buf.String()
	assert.True(t, strings.HasPrefix(text, "#[Logging for: ycsbctl]\n#[Histogram log format version 1.3]\n#[StartTime: 1793869200.250 (seconds since epoch), "), text)
	assert.Contains(t, text, "#[BaseTime: 0.000 (seconds since epoch)]\n")
	assert.Contains(t, text, "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n")
	assert.Contains(t, text, "\nTag=READ,1793869200.250,10.000,")
	assert.Contains(t, text, "\nTag=Intended-READ-FAILED,1793869210.250,10.000,1000.")
	assert.Contains(t, text, "\n1793869220.250,5.500,0.000,HIST")

	r := hdrhistogram.NewHistogramLogReader(&buf)
	for i, want := range ivs {
		got, err := r.NextIntervalHistogram()
		require.NoError(t, err, "interval %d", i)
		require.NotNil(t, got, "interval %d missing", i)
		assert.Equal(t, want.tag, got.Tag(), "interval %d", i)
		assert.Equal(t, want.h.TotalCount(), got.TotalCount(), "interval %d", i)
		assert.Equal(t, want.h.Max(), got.Max(), "interval %d", i)
		assert.Equal(t, want.h.Min(), got.Min(), "interval %d", i)
		for _, p := range []float64{50, 90, 99, 99.9, 100} {
			assert.Equal(t, want.h.ValueAtPercentile(p), got.ValueAtPercentile(p), "interval %d p%v", i, p)
		}
		// Absolute timestamps (BaseTime 0), millisecond resolution.
		assert.InDelta(t, want.start/1e6, got.StartTimeMs(), 1, "interval %d start", i)
		assert.InDelta(t, want.end/1e6, got.EndTimeMs(), 1, "interval %d end", i)
	}
	last, err := r.NextIntervalHistogram()
	require.NoError(t, err)
	assert.Nil(t, last)
}

func TestInvalidTag(t *testing.T) {
	lw := hlog.NewWriter(io.Discard, time.Now())
	for _, tag := range []string{"a,b", "a b", "a\nb", "a\tb"} {
		assert.False(t, hlog.ValidTag(tag), tag)
		assert.Error(t, lw.WriteInterval(tag, 0, 1, measurement.NewHistogram()), tag)
	}
	assert.True(t, hlog.ValidTag("Intended-READ-FAILED"))
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, io.ErrShortWrite }

func TestWriteErrorIsReported(t *testing.T) {
	lw := hlog.NewWriter(failWriter{}, time.Now())
	h := measurement.NewHistogram()
	require.NoError(t, h.RecordValue(5))
	assert.Error(t, lw.WriteInterval("READ", 0, 1, h))
}

const pyReader = `
import json, sys
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader
ref = HdrHistogram(1, 3600000000000, 3)
r = HistogramLogReader(sys.argv[1], ref)
out = []
while True:
    h = r.get_next_interval_histogram()
    if h is None:
        break
    out.append({"tag": h.get_tag(), "count": h.get_total_count(),
                "p99": h.get_value_at_percentile(99), "max": h.get_max_value(),
                "start_ms": h.get_start_time_stamp()})
print(json.dumps(out))
`

// TestLogReadBackWithPythonHdrh decodes the log with HdrHistogram's Python
// package (hdrhistogram, in the checkout's .venv).
func TestLogReadBackWithPythonHdrh(t *testing.T) {
	python := tools.Python(t, "hdrh")
	start := time.Date(2026, 11, 5, 9, 0, 0, 0, time.UTC)
	ivs := fixture(start)
	path := filepath.Join(t.TempDir(), "ycsbctl.hlog")
	f, err := os.Create(path)
	require.NoError(t, err)
	writeLog(t, f, start, ivs)
	require.NoError(t, f.Close())

	out, err := exec.Command(python, "-c", pyReader, path).Output()
	require.NoError(t, err, "%s", out)
	var got []struct {
		Tag     *string `json:"tag"`
		Count   int64   `json:"count"`
		P99     int64   `json:"p99"`
		Max     int64   `json:"max"`
		StartMs float64 `json:"start_ms"`
	}
	require.NoError(t, json.Unmarshal(out, &got), "%s", out)
	require.Len(t, got, len(ivs))
	var wantTotal, gotTotal int64
	for i, want := range ivs {
		wantTotal += want.h.TotalCount()
		gotTotal += got[i].Count
		assert.Equal(t, want.h.TotalCount(), got[i].Count, "interval %d", i)
		if want.tag != "" {
			require.NotNil(t, got[i].Tag, "interval %d", i)
			assert.Equal(t, want.tag, *got[i].Tag, "interval %d", i)
		}
		assert.True(t, want.h.ValuesAreEquivalent(want.h.ValueAtPercentile(99), got[i].P99), "interval %d p99 %d vs %d", i, want.h.ValueAtPercentile(99), got[i].P99)
		assert.InDelta(t, float64(want.start)/1e6, got[i].StartMs, 1, "interval %d start", i)
	}
	assert.Equal(t, wantTotal, gotTotal)
}
