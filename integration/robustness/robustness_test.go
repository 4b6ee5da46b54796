//go:build robustness

// Package robustness is ycsbctl's randomized operator test, on the model
// of etcd's robustness tests: a generator makes histories (random
// interleavings of real ycsbctl commands on shared results directories
// and shared agents, with SIGKILL, SIGTERM and SIGSTOP at instants chosen
// from observed progress), an executor runs each history as real
// processes, and a checker reads the world afterwards against the rules
// of docs/results.md and docs/exit-codes.md. No database server is
// needed: the basic adapter, the embedded store and agents on 127.0.0.1.
//
// The environment chooses the histories (each is a seed; its plan is a
// pure function of it):
//
//	YCSBCTL_ROBUST_SEED=N         the one history of seed N
//	YCSBCTL_ROBUST_SEEDS=N,M,...  these seeds (make robustness-ci's fixed list)
//	YCSBCTL_ROBUST_HISTORIES=K    K more histories of new random seeds (default 2 without SEED/SEEDS)
//	YCSBCTL_ROBUST_DURATION=20m   new random histories until this much time has passed (make robustness)
//	YCSBCTL_ROBUST_STDERR=1       a failing history prints every step's stderr, not only those it names
//
// A failing history prints its seed, its plan, its timeline and what it
// broke; `YCSBCTL_ROBUST_SEED=N make robustness` runs it again.
package robustness

import (
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// histories reads the environment: the seeds to run, how many random
// histories to add, and for how long to keep adding them.
func histories(t *testing.T) (seeds []uint64, random int, until time.Duration) {
	parse := func(name, v string) uint64 {
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: expected a seed (an unsigned integer)", name, v)
		}
		return n
	}
	if v := os.Getenv("YCSBCTL_ROBUST_SEED"); v != "" {
		seeds = append(seeds, parse("YCSBCTL_ROBUST_SEED", v))
	}
	if v := os.Getenv("YCSBCTL_ROBUST_SEEDS"); v != "" {
		for _, f := range strings.Split(v, ",") {
			seeds = append(seeds, parse("YCSBCTL_ROBUST_SEEDS", f))
		}
	}
	if len(seeds) == 0 {
		random = 2
	}
	if v := os.Getenv("YCSBCTL_ROBUST_HISTORIES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			t.Fatalf("YCSBCTL_ROBUST_HISTORIES=%q: expected a count of histories", v)
		}
		random = n
	}
	if v := os.Getenv("YCSBCTL_ROBUST_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("YCSBCTL_ROBUST_DURATION=%q: expected a duration such as 20m", v)
		}
		until = d
	}
	return seeds, random, until
}

// tally is what the runs of one test add up to.
type tally struct {
	histories, steps, failed int
	classes                  map[string]int
	firstFailure             map[string]string // class → the first seed that broke it, and after how many histories
}

func TestRobustness(t *testing.T) {
	binDir := t.TempDir()
	bin, err := buildBinary(binDir)
	if err != nil {
		t.Fatal(err)
	}
	seeds, random, until := histories(t)
	began := time.Now()
	sum := &tally{classes: map[string]int{}, firstFailure: map[string]string{}}
	run := func(seed uint64) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { runHistory(t, bin, seed, sum) })
	}
	for _, s := range seeds {
		run(s)
	}
	for i := 0; i < random || (until > 0 && time.Since(began) < until); i++ {
		run(rand.Uint64() % 1e9)
	}
	line := fmt.Sprintf("ROBUSTNESS %d histories, %d steps, %d failed, in %s", sum.histories, sum.steps, sum.failed, time.Since(began).Round(time.Second))
	var classes []string
	for c := range sum.classes {
		classes = append(classes, c)
	}
	sort.Strings(classes)
	for _, c := range classes {
		line += fmt.Sprintf("\nROBUSTNESS invariant %-20s broken %3d times, first by %s", c, sum.classes[c], sum.firstFailure[c])
	}
	t.Log(line)
	fmt.Fprintln(os.Stderr, line)
}

// runHistory generates, executes and checks one history.
func runHistory(t *testing.T, bin string, seed uint64, sum *tally) {
	h := generate(seed)
	began := time.Now()
	w, err := newWorld(h, bin, t.TempDir())
	if err != nil {
		t.Fatalf("seed %d: setting up: %v", seed, err)
	}
	w.execute()
	e := w.finish()
	w.stopAgents()
	vs := check(w, e)
	sum.histories++
	sum.steps += len(h.steps)
	t.Logf("ROBUSTNESS seed=%d: %d steps, %d violations, %s", seed, len(h.steps), len(vs), time.Since(began).Round(time.Millisecond))
	if len(vs) == 0 {
		return
	}
	sum.failed++
	for _, v := range vs {
		sum.classes[v.class]++
		if _, ok := sum.firstFailure[v.class]; !ok {
			sum.firstFailure[v.class] = fmt.Sprintf("seed %d (history %d)", seed, sum.histories)
		}
	}
	t.Error(w.describe(vs))
}

// describe is a failing history as its reader needs it: how to run it
// again, its plan, its timeline, what it broke and the last words of the
// steps named.
func (w *world) describe(vs []violation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "history of seed %d broke %d rules; run it again: YCSBCTL_ROBUST_SEED=%d make robustness\n", w.h.seed, len(vs), w.h.seed)
	b.WriteString("plan:\n")
	for _, s := range w.h.steps {
		fmt.Fprintf(&b, "  %s\n", s)
	}
	b.WriteString("steps:\n")
	for _, o := range w.outs {
		if o == nil {
			continue
		}
		fmt.Fprintf(&b, "  %s\n", o.line())
	}
	b.WriteString("timeline:\n")
	w.mu.Lock()
	events := append([]event(nil), w.events...)
	w.mu.Unlock()
	sort.SliceStable(events, func(i, j int) bool { return events[i].at < events[j].at })
	for _, ev := range events {
		who := "  "
		if ev.step >= 0 {
			who = fmt.Sprintf("#%d", ev.step)
		}
		fmt.Fprintf(&b, "  t=%-7s %s %s\n", ms(ev.at), who, ev.what)
	}
	named := map[int]bool{}
	for _, v := range vs {
		if v.step >= 0 {
			named[v.step] = true
		}
	}
	all := os.Getenv("YCSBCTL_ROBUST_STDERR") != "" // every step's, not only those named
	for _, o := range w.outs {
		if o != nil && o.p != nil && (named[o.s.id] || all) {
			fmt.Fprintf(&b, "--- #%d stderr (tail) ---\n%s\n", o.s.id, tail(o.p.errText(), 1500))
		}
	}
	// Last, where a log read from its tail shows them.
	fmt.Fprintf(&b, "violations of seed %d (%d):\n", w.h.seed, len(vs))
	for _, v := range vs {
		fmt.Fprintf(&b, "  %s\n", v)
	}
	return b.String()
}

// line is a step as it ran: t=start..end cmd → exit (what was done to it).
func (o *outcome) line() string {
	if o.p == nil {
		return fmt.Sprintf("#%d ycsbctl %s: did not start (%v)", o.s.id, strings.Join(o.args, " "), o.startErr)
	}
	var done []string
	for _, x := range o.signals {
		if x.err == nil {
			done = append(done, fmt.Sprintf("%s at t=%s", sigName(x.sig), ms(x.at)))
		}
	}
	extra := ""
	if len(done) > 0 {
		extra = " (" + strings.Join(done, ", ") + ")"
	}
	return fmt.Sprintf("#%d t=%s..%s ycsbctl %s → exit %d%s", o.s.id, ms(o.startAt), ms(o.endAt), strings.Join(o.args, " "), o.exit(), extra)
}

// TestRobustnessPlans prints the plans of seeds 1..YCSBCTL_ROBUST_PLANS
// (default 20) without running them, and with YCSBCTL_ROBUST_COVER=N the
// fewest seeds of 1..N (greedily) whose histories exercise every feature
// any of them does: make robustness-ci's fixed list.
func TestRobustnessPlans(t *testing.T) {
	n := 20
	if v := os.Getenv("YCSBCTL_ROBUST_PLANS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			t.Fatalf("YCSBCTL_ROBUST_PLANS=%q: expected a count", v)
		}
	}
	for seed := uint64(1); seed <= uint64(n); seed++ {
		var b strings.Builder
		for _, s := range generate(seed).steps {
			fmt.Fprintf(&b, "\n  %s", s)
		}
		t.Logf("seed %d:%s", seed, b.String())
	}
	if v := os.Getenv("YCSBCTL_ROBUST_COVER"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("YCSBCTL_ROBUST_COVER=%q: expected a count", v)
		}
		t.Log(cover(n))
	}
}

// cover picks seeds of 1..n greedily until every feature is exercised.
func cover(n int) string {
	feats := map[uint64]map[string]bool{}
	all := map[string]bool{}
	for seed := uint64(1); seed <= uint64(n); seed++ {
		feats[seed] = generate(seed).features()
		for f := range feats[seed] {
			all[f] = true
		}
	}
	covered := map[string]bool{}
	var picked []string
	var b strings.Builder
	for len(covered) < len(all) {
		best, gain := uint64(0), 0
		for seed := uint64(1); seed <= uint64(n); seed++ {
			g := 0
			for f := range feats[seed] {
				if !covered[f] {
					g++
				}
			}
			if g > gain {
				best, gain = seed, g
			}
		}
		var added []string
		for f := range feats[best] {
			if !covered[f] {
				covered[f] = true
				added = append(added, f)
			}
		}
		sort.Strings(added)
		picked = append(picked, strconv.FormatUint(best, 10))
		fmt.Fprintf(&b, "\n  seed %d adds %s", best, strings.Join(added, "; "))
	}
	return fmt.Sprintf("%d seeds cover the %d features of seeds 1..%d: %s%s", len(picked), len(all), n, strings.Join(picked, ","), b.String())
}
