package bundle

import (
	"bufio"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/wire"
)

// HlogLine is one interval line of an interval log, not yet decoded.
type HlogLine struct {
	Tag string
	// Series and Agent split the tag: "READ.agent-2" is READ for agent
	// "agent-2", "READ.all" READ merged ("all"); a plain YCSB tag
	// ("READ") has Agent "".
	Series  measurement.Series
	Known   bool // Series parsed
	Agent   string
	StartNs int64
	EndNs   int64
	payload string // base64
}

// Decode decodes the line's histogram. ycsbctl's own geometry goes
// through the bounded sparse decoder shared with the network path; other
// writers' histograms through the library.
func (l *HlogLine) Decode(scratch *wire.Sparse) (*hdrhistogram.Histogram, error) {
	raw, err := base64.StdEncoding.DecodeString(l.payload)
	if err != nil {
		return nil, fmt.Errorf("tag %q: %w", l.Tag, err)
	}
	h := measurement.NewHistogram()
	if scratch != nil {
		if err := wire.DecodeSparse(raw, scratch); err == nil {
			if err := scratch.AddTo(h); err != nil {
				return nil, err
			}
			return h, nil
		}
	}
	h, err = hdrhistogram.Decode([]byte(l.payload))
	if err != nil {
		return nil, fmt.Errorf("tag %q: %w", l.Tag, err)
	}
	return h, nil
}

// ScanHlog calls fn for every interval line of an interval log, without
// decoding histograms, so callers decode only the lines they need: a
// long distributed run holds thousands of lines.
func ScanHlog(r io.Reader, fn func(*HlogLine) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == '"' {
			continue
		}
		var l HlogLine
		if strings.HasPrefix(line, "Tag=") {
			i := strings.IndexByte(line, ',')
			if i < 0 {
				return fmt.Errorf("hlog line %d: tag without fields", n)
			}
			l.Tag = line[4:i]
			line = line[i+1:]
		}
		f := strings.Split(line, ",")
		if len(f) != 4 {
			return fmt.Errorf("hlog line %d: %d fields, want 4", n, len(f))
		}
		start, err1 := strconv.ParseFloat(f[0], 64)
		length, err2 := strconv.ParseFloat(f[1], 64)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("hlog line %d: bad timestamps", n)
		}
		l.StartNs = int64(start * 1e9)
		l.EndNs = int64((start + length) * 1e9)
		l.payload = f[3]
		name := l.Tag
		if i := strings.LastIndexByte(name, '.'); i >= 0 {
			name, l.Agent = name[:i], name[i+1:]
		}
		l.Series, l.Known = measurement.ParseSeries(name)
		if err := fn(&l); err != nil {
			return err
		}
	}
	return sc.Err()
}

// Histograms is the whole-run latency distribution per series, merged
// over the run and per agent.
type Histograms struct {
	// All holds each series merged over every interval and agent.
	All map[measurement.Series]*hdrhistogram.Histogram
	// Agents holds each agent's series ("agent-0", ...); empty for a
	// single host.
	Agents map[string]map[measurement.Series]*hdrhistogram.Histogram
}

// Histograms reads merged.hlog and merges its intervals per series. The
// merge uses the ".all" lines when the log has them and otherwise adds up
// whatever lines there are (logs written with plain YCSB tags).
func (b *Bundle) Histograms() (*Histograms, error) {
	f, err := os.Open(filepath.Join(b.Dir, FileHlog))
	if err != nil {
		return nil, err
	}
	h, err := ReadHistograms(f, true)
	// Read-only: a failing Close loses nothing, but is not hidden either.
	return h, errors.Join(err, f.Close())
}

// ReadHistograms merges an interval log per series; withAgents also keeps
// per-agent merges.
func ReadHistograms(r io.Reader, withAgents bool) (*Histograms, error) {
	out := &Histograms{All: map[measurement.Series]*hdrhistogram.Histogram{}, Agents: map[string]map[measurement.Series]*hdrhistogram.Histogram{}}
	other := map[measurement.Series]*hdrhistogram.Histogram{}
	hasAll := false
	var scratch wire.Sparse
	add := func(m map[measurement.Series]*hdrhistogram.Histogram, s measurement.Series, h *hdrhistogram.Histogram) {
		if m[s] == nil {
			m[s] = measurement.NewHistogram()
		}
		measurement.Merge(m[s], h)
	}
	err := ScanHlog(r, func(l *HlogLine) error {
		if !l.Known {
			return nil
		}
		isAgent := strings.HasPrefix(l.Agent, TagAgentPrefix)
		if isAgent && !withAgents {
			return nil
		}
		h, err := l.Decode(&scratch)
		if err != nil {
			return err
		}
		switch {
		case l.Agent == TagAll:
			hasAll = true
			add(out.All, l.Series, h)
		case isAgent:
			if out.Agents[l.Agent] == nil {
				out.Agents[l.Agent] = map[measurement.Series]*hdrhistogram.Histogram{}
			}
			add(out.Agents[l.Agent], l.Series, h)
			add(other, l.Series, h)
		default:
			add(other, l.Series, h)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !hasAll {
		out.All = other
	}
	return out, nil
}
