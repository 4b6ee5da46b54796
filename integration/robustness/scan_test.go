//go:build robustness

package robustness

// Reading the world: the records the results directories hold (a run's
// spool, its run.json, a capacity search's capacity.json, a suite's
// suite.json), found by walking the history's directories. The watcher
// scans them every few tens of milliseconds while the history runs, so
// that every record that ever existed is known, with when it was first
// and last seen; the checker scans them once more at the end.

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// form is how a record is held.
type form string

const (
	formSpool    form = "spool"
	formRun      form = "run.json"
	formCapacity form = "capacity.json"
)

// rec is one run's record in a directory.
type rec struct {
	dir    string // relative to the history's directory
	id     string // run_id; a capacity search's is "capacity@" its start
	label  string // the label of the step that made it (-l)
	form   form
	status string
	exit   int
	bad    string // why a run.json or capacity.json could not be read
}

func (r rec) key() string { return r.dir + "|" + r.id }

func (r rec) String() string {
	s := fmt.Sprintf("%s %s in %s (label %q", r.form, r.id, r.dir, r.label)
	if r.form != formSpool {
		s += fmt.Sprintf(", status %s, exit_code %d", r.status, r.exit)
	}
	return s + ")"
}

// suiteRec is a suite's suite.json.
type suiteRec struct {
	name  string
	steps []suiteStepRec
	bad   string
}

type suiteStepRec struct {
	Dir      string `json:"dir"`
	Status   string `json:"status"`
	ExitCode *int   `json:"exit_code"`
}

// view is what the directories hold at one instant.
type view struct {
	recs   []rec
	suites map[string]suiteRec // by directory
	files  map[string]bool     // every regular file, by relative path
	dirs   map[string]bool     // every directory, by relative path
}

// byDir groups the records by directory.
func (v *view) byDir() map[string][]rec {
	out := map[string][]rec{}
	for _, r := range v.recs {
		out[r.dir] = append(out[r.dir], r)
	}
	return out
}

// findIn finds a run's record anywhere in a history directory: where it
// was made, or where --overwrite put it aside (and back).
func (v *view) findIn(top, id string) (rec, bool) {
	var found rec
	ok := false
	for _, r := range v.recs {
		if topDir(r.dir) == top && r.id == id && (!ok || r.form != formSpool) {
			found, ok = r, true
		}
	}
	return found, ok
}

// scanner reads records, parsing each file once per (size, mtime).
type scanner struct {
	root  string
	mu    sync.Mutex
	cache map[string]cached
}

type cached struct {
	size  int64
	mtime time.Time
	r     rec
	s     *suiteRec
}

func newScanner(root string) *scanner { return &scanner{root: root, cache: map[string]cached{}} }

// scan walks the given directories (relative), three levels deep.
func (sc *scanner) scan(dirs []string) *view {
	v := &view{suites: map[string]suiteRec{}, files: map[string]bool{}, dirs: map[string]bool{".": true}}
	for _, d := range dirs {
		sc.walk(v, d, 0)
	}
	sort.Slice(v.recs, func(i, j int) bool { return v.recs[i].key() < v.recs[j].key() })
	return v
}

func (sc *scanner) walk(v *view, dir string, depth int) {
	entries, err := os.ReadDir(filepath.Join(sc.root, dir))
	if err != nil {
		return
	}
	v.dirs[dir] = true
	for _, e := range entries {
		rel := filepath.Join(dir, e.Name())
		if e.IsDir() {
			if depth < 3 {
				sc.walk(v, rel, depth+1)
			}
			continue
		}
		v.files[rel] = true
		switch name := e.Name(); {
		case strings.HasPrefix(name, ".spool-"):
			if r, ok := sc.parse(rel, parseSpool); ok {
				v.recs = append(v.recs, r)
			}
		case name == "run.json":
			if r, ok := sc.parse(rel, parseRunJSON); ok {
				v.recs = append(v.recs, r)
			}
		case name == "capacity.json":
			if r, ok := sc.parse(rel, parseCapacity); ok {
				v.recs = append(v.recs, r)
			}
		case name == "suite.json":
			v.suites[dir] = sc.parseSuite(rel)
		}
	}
}

// parse reads a record file through the cache; false when the file is
// gone or (a spool being created) not readable yet.
func (sc *scanner) parse(rel string, fn func(path string) (rec, bool)) (rec, bool) {
	path := filepath.Join(sc.root, rel)
	st, err := os.Stat(path)
	if err != nil {
		return rec{}, false
	}
	sc.mu.Lock()
	c, ok := sc.cache[rel]
	sc.mu.Unlock()
	if ok && c.size == st.Size() && c.mtime.Equal(st.ModTime()) && c.s == nil {
		return c.r, true
	}
	r, ok := fn(path)
	if !ok {
		return rec{}, false
	}
	r.dir = filepath.Dir(rel)
	sc.mu.Lock()
	sc.cache[rel] = cached{size: st.Size(), mtime: st.ModTime(), r: r}
	sc.mu.Unlock()
	return r, true
}

// spoolHeader is the part of a spool's header (run.json as known when
// the run started) that names the run.
type spoolHeader struct {
	RunID string `json:"run_id"`
	Label string `json:"label"`
}

// parseSpool reads a spool's header: a magic line, then a frame of a
// 4-byte big-endian length and the header's JSON.
func parseSpool(path string) (rec, bool) {
	f, err := os.Open(path)
	if err != nil {
		return rec{}, false
	}
	defer func() { _ = f.Close() }()
	br := bufio.NewReader(f)
	magic, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(magic, "ycsbctl-spool ") {
		return rec{}, false
	}
	var n [4]byte
	if _, err := io.ReadFull(br, n[:]); err != nil {
		return rec{}, false
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > 64<<20 {
		return rec{}, false
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(br, b); err != nil {
		return rec{}, false
	}
	var h spoolHeader
	if json.Unmarshal(b, &h) != nil || h.RunID == "" {
		return rec{}, false
	}
	return rec{id: h.RunID, label: h.Label, form: formSpool}, true
}

type runJSON struct {
	RunID    string `json:"run_id"`
	Label    string `json:"label"`
	Status   string `json:"status"`
	ExitCode int    `json:"exit_code"`
}

// parseRunJSON reads run.json; one that cannot be read is a record too,
// a broken one (its name is that of the file's path).
func parseRunJSON(path string) (rec, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return rec{}, false
	}
	var r runJSON
	if err := json.Unmarshal(b, &r); err != nil || r.RunID == "" {
		return rec{id: "unreadable run.json", form: formRun, bad: fmt.Sprintf("%v (starts %q)", err, tail(string(b[:min(len(b), 40)]), 40))}, true
	}
	return rec{id: r.RunID, label: r.Label, form: formRun, status: r.Status, exit: r.ExitCode}, true
}

type capacityJSON struct {
	Kind      string `json:"kind"`
	Label     string `json:"label"`
	StartedAt string `json:"started_at"`
	Status    string `json:"status"`
	ExitCode  int    `json:"exit_code"`
}

func parseCapacity(path string) (rec, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return rec{}, false
	}
	var c capacityJSON
	if err := json.Unmarshal(b, &c); err != nil || c.StartedAt == "" {
		return rec{id: "unreadable capacity.json", form: formCapacity, bad: fmt.Sprint(err)}, true
	}
	return rec{id: "capacity@" + c.StartedAt, label: c.Label, form: formCapacity, status: c.Status, exit: c.ExitCode}, true
}

func (sc *scanner) parseSuite(rel string) suiteRec {
	b, err := os.ReadFile(filepath.Join(sc.root, rel))
	if err != nil {
		return suiteRec{bad: err.Error()}
	}
	var s struct {
		Name  string         `json:"name"`
		Steps []suiteStepRec `json:"steps"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return suiteRec{bad: err.Error()}
	}
	return suiteRec{name: s.Name, steps: s.Steps}
}

// sighting is a record as the watcher saw it over the history.
type sighting struct {
	rec
	first, last time.Duration // since the history's start
	forms       map[form]bool
	complete    bool // its run.json said complete at some point
	// final is when it was first seen finished (a run.json, a
	// capacity.json no longer running): its writer is done with it.
	final time.Duration
	done  bool
}

// watcher scans the history's directories until stopped.
type watcher struct {
	sc    *scanner
	dirs  []string
	start time.Time
	mu    sync.Mutex
	seen  map[string]*sighting
	stop  chan struct{}
	done  chan struct{}
}

func newWatcher(sc *scanner, dirs []string, start time.Time) *watcher {
	w := &watcher{sc: sc, dirs: dirs, start: start, seen: map[string]*sighting{}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			w.observe(sc.scan(dirs))
			select {
			case <-w.stop:
				return
			case <-time.After(40 * time.Millisecond):
			}
		}
	}()
	return w
}

// observe adds a view's records to what was seen.
func (w *watcher) observe(v *view) {
	now := time.Since(w.start)
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range v.recs {
		if r.bad != "" {
			continue
		}
		s, ok := w.seen[r.key()]
		if !ok {
			s = &sighting{rec: r, first: now, forms: map[form]bool{}}
			w.seen[r.key()] = s
		}
		if r.form != formSpool || s.form == formSpool {
			s.rec = r // a run.json says more than its spool
		}
		s.last = now
		s.forms[r.form] = true
		if r.form != formSpool && r.status == "complete" {
			s.complete = true
		}
		if r.form != formSpool && r.status != "running" && !s.done {
			s.final, s.done = now, true
		}
	}
}

func (w *watcher) close() {
	close(w.stop)
	<-w.done
}

// sightings returns every record seen, in the order first seen.
func (w *watcher) sightings() []*sighting {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []*sighting
	for _, s := range w.seen {
		c := *s
		out = append(out, &c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].first < out[j].first })
	return out
}
