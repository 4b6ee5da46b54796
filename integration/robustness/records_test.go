//go:build robustness

package robustness

// The checker's rules about records (check_test.go has its list): none
// lost or replaced unless asked, one run's per directory, killed runs
// recovered as such, counts that agree, the operator's files intact.

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// writerOf is the step whose label a record bears.
func (c *checker) writerOf(r rec) *outcome {
	id, err := strconv.Atoi(strings.TrimPrefix(r.label, "rb"))
	if err != nil || !strings.HasPrefix(r.label, "rb") || id < 0 || id >= len(c.w.outs) {
		return nil
	}
	return c.w.outs[id]
}

// firstRecord is when the watcher first saw a record of o: it measures,
// and holds its directory.
func (c *checker) firstRecord(o *outcome, sights []*sighting) (time.Duration, bool) {
	first, ok := time.Duration(0), false
	for _, r := range sights {
		if r.label == o.s.label() && (!ok || r.first < first) {
			first, ok = r.first, true
		}
	}
	return first, ok
}

// replacedLegitimately names the step asked to replace a record, if any:
// one whose own record began once the record's writer was done with it
// (its record finished, or its process gone: a run gives up its
// directory before its process exits, so the next owner may start before
// that).
func (c *checker) replacedLegitimately(r *sighting, sights []*sighting) string {
	done := r.last
	if wr := c.writerOf(r.rec); wr != nil {
		done = wr.endAt
	}
	// Finished where it was made, or as --overwrite's set-aside found it.
	for _, x := range sights {
		if x.id == r.id && topDir(x.dir) == topDir(r.dir) && x.done && x.final < done {
			done = x.final
		}
	}
	for _, o := range c.w.outs {
		if o == nil || o.p == nil {
			continue
		}
		began, measured := c.firstRecord(o, sights)
		if !measured || began < done {
			continue
		}
		// Under the directory: a probe's bundle, or the old bundle where
		// --overwrite put it aside until the new run measured.
		inDir := r.dir == o.s.dir || strings.HasPrefix(r.dir, o.s.dir+"/")
		switch {
		case runKind(o.s.kind) && o.s.overwrite && inDir:
			return fmt.Sprintf("#%d --overwrite", o.s.id)
		case o.s.kind == kResume && strings.HasPrefix(r.dir, suiteDir+"/") && !r.complete:
			return fmt.Sprintf("#%d --resume (a step that did not complete)", o.s.id)
		}
	}
	return ""
}

// records checks that no record was lost, that each directory holds one
// run's, and that killed runs were recovered as such.
func (c *checker) records() {
	final := c.e.final
	sights := c.w.w.sightings()
	judged := map[string]bool{}
	for _, r := range sights {
		// A run's record is judged once, where it was first seen: where
		// --overwrite put it aside is the same record, moved.
		if judged[topDir(r.dir)+"|"+r.id] {
			continue
		}
		judged[topDir(r.dir)+"|"+r.id] = true
		if _, ok := final.findIn(topDir(r.dir), r.id); ok || c.replacedLegitimately(r, sights) != "" {
			continue
		}
		who := "a step of unknown label"
		if wr := c.writerOf(r.rec); wr != nil {
			who = fmt.Sprintf("#%d", wr.s.id)
		}
		c.fail("lost", -1, "%s's record %s %s (first seen t=%s, last t=%s) is gone, and no step was asked to replace it; steps in %s then: %s",
			who, r.form, r.id, ms(r.first), ms(r.last), topDir(r.dir), c.activeAround(topDir(r.dir), r.last))
	}
	for dir, recs := range final.byDir() {
		ids := map[string]bool{}
		var names []string
		for _, r := range recs {
			if !ids[r.id] {
				ids[r.id] = true
				names = append(names, r.String())
			}
		}
		if len(ids) > 1 {
			c.fail("one-owner", -1, "%s holds the records of %d runs: %s", dir, len(ids), strings.Join(names, "; "))
		}
	}
	c.recovered(final)
}

// activeAround lists the steps alive in dir around t.
func (c *checker) activeAround(dir string, t time.Duration) string {
	var out []string
	for _, o := range c.w.outs {
		if o != nil && o.p != nil && touches(o.s, dir) && o.startAt <= t+500*time.Millisecond && o.endAt+500*time.Millisecond >= t {
			out = append(out, fmt.Sprintf("#%d %s (t=%s..%s, exit %d)", o.s.id, o.s.kind, ms(o.startAt), ms(o.endAt), o.exit()))
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// recovered: a killed run's spool, once `report` rebuilt it, is aborted
// with its exit code unknown; a killed search is not left running.
func (c *checker) recovered(final *view) {
	for _, o := range c.w.outs {
		if o == nil || o.p == nil || o.exit() != 128+int(syscall.SIGKILL) {
			continue
		}
		for _, r := range o.post.recs {
			if r.label != o.s.label() {
				continue
			}
			f, ok := final.findIn(topDir(r.dir), r.id)
			switch {
			case !ok:
				// Judged by records (lost, or replaced as asked).
			case r.form == formSpool && (f.form != formRun || f.status != "aborted" || f.exit != -1):
				c.fail("recovered", o.s.id, "killed; its spool in %s, after ycsbctl report, is %s (expected run.json aborted, exit_code -1)", r.dir, f)
			case r.form == formCapacity && (f.status == "running" || f.exit == 0):
				c.fail("recovered", o.s.id, "killed; after ycsbctl report its capacity.json still says status %s, exit_code %d", f.status, f.exit)
			}
		}
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%dms", d.Milliseconds()) }

// counts checks every readable run.json at the end.
func (c *checker) counts() {
	for _, r := range c.e.final.recs {
		if r.form != formRun {
			continue
		}
		if r.bad != "" {
			if !c.askedFor(filepath.Join(r.dir, "run.json")) {
				c.fail("unreadable", -1, "%s/run.json cannot be read: %s", r.dir, r.bad)
			}
			continue
		}
		for _, m := range bundleCounts(filepath.Join(c.w.work, r.dir)) {
			c.fail("counts", -1, "%s (%s, %s): %s", r.dir, r.id, r.status, m)
		}
	}
}

// askedFor reports whether a step wrote path as asked: an -o target that
// did not exist before it.
func (c *checker) askedFor(path string) bool {
	for _, o := range c.w.outs {
		if o != nil && o.s.out == path && o.pre != nil && !o.pre.files[path] {
			return true
		}
	}
	return false
}

func (c *checker) files() {
	b, err := os.ReadFile(filepath.Join(c.w.work, userFile))
	if err != nil || string(b) != userContent {
		c.fail("files", -1, "the operator's %s is gone or changed (%v)", userFile, err)
	}
	if sr, ok := c.e.final.suites[suiteDir]; ok && sr.name != "robust" {
		c.fail("files", -1, "%s/suite.json is now suite %q's, not robust's", suiteDir, sr.name)
	}
	if b, err := os.ReadFile(filepath.Join(c.w.work, suiteDir, "suite.yaml")); err == nil && string(b) != suiteFile {
		c.fail("files", -1, "%s/suite.yaml is no longer robust's definition:\n%s", suiteDir, tail(string(b), 400))
	}
}

// touches reports whether a step names dir: its results, the bundle it
// compares, the file it writes.
func touches(s *step, dir string) bool {
	for _, p := range []string{s.dir, s.other, s.out} {
		if p != "" && topDir(p) == dir {
			return true
		}
	}
	return false
}
