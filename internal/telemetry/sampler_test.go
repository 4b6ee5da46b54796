package telemetry

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/adapters"
)

// waitFor polls cond until it holds, failing with what it last saw after
// a generous bound (the machine is shared and loaded).
func waitFor(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok, seen := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after 30 s; last seen: %s", what, seen)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The sampler on this machine's /proc: a child process named like a
// server is found, its figures and the load generator's move, and a cut
// holds the samples since the previous cut only.
func TestSamplerOnThisHost(t *testing.T) {
	// The stand-in server is sleep under a name of this test's own (its
	// comm is the name it was started by): on a shared machine other
	// sleeps come and go, and each would be found, and said, as another
	// server process.
	name := "ysleep" + strconv.Itoa(os.Getpid())
	if len(name) > 15 {
		name = name[:15] // comm's length
	}
	sleepBin, err := exec.LookPath("sleep")
	require.NoError(t, err)
	link := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.Symlink(sleepBin, link))
	sleep := exec.Command(link, "60")
	require.NoError(t, sleep.Start())
	t.Cleanup(func() { _ = sleep.Process.Kill(); _ = sleep.Wait() })
	var mu sync.Mutex
	var logs []string
	s, err := Start(Config{Every: 20 * time.Millisecond, Host: "testhost", DB: "test",
		Processes: []adapters.ServerProcess{{Role: "sleeper", Name: name}},
		Logf: func(f string, a ...any) {
			mu.Lock()
			logs = append(logs, f)
			mu.Unlock()
		}})
	require.NoError(t, err)
	defer s.Close()
	start := time.Now().UnixNano()
	var iv *Interval
	var notes []string
	var end int64
	waitFor(t, "samples", func() (bool, string) {
		time.Sleep(60 * time.Millisecond) // let readings accumulate between cuts
		end = time.Now().UnixNano()
		iv = s.Cut(start, end, false)
		if iv != nil {
			notes = append(notes, iv.Notes...)
		}
		return iv != nil && iv.Samples >= 2, "no interval"
	})
	assert.Positive(t, iv.Cores)
	assert.Positive(t, iv.MemTotal)
	assert.GreaterOrEqual(t, iv.DB.Count, 1, "the sleep child is found by its name")
	assert.Positive(t, iv.Client.RSSMax, "the test binary is the load generator")
	assert.Positive(t, iv.ClientCPUs, "what the load generator may use: at least its GOMAXPROCS or its quota")
	assert.LessOrEqual(t, iv.ClientCPUs, float64(runtime.GOMAXPROCS(0)))
	assert.Contains(t, strings.Join(notes, "\n"), "sleeper (pid ")
	assert.Len(t, iv.Points, iv.Samples)
	// The next interval starts where the first ended (as the engine's
	// do): it holds later samples only, none counted twice.
	last := iv.Points[len(iv.Points)-1].UnixNs
	time.Sleep(50 * time.Millisecond)
	end2 := time.Now().UnixNano()
	iv2 := s.Cut(end, end2, false)
	require.NotNil(t, iv2)
	for _, p := range iv2.Points {
		assert.Greater(t, p.UnixNs, last)
		assert.LessOrEqual(t, p.UnixNs, end2)
	}
	assert.Empty(t, iv2.Notes, "notes are said once")
}

// No server process on the host: said once, and the host's figures are
// still there.
func TestSamplerNothingFound(t *testing.T) {
	s, err := Start(Config{Every: 20 * time.Millisecond, Host: "h4", DB: "cassandra",
		Processes: []adapters.ServerProcess{{Role: "cassandra", MainClass: "no.such.Main"}}})
	require.NoError(t, err)
	defer s.Close()
	warm := s.Cut(0, 0, true)
	require.NotNil(t, warm)
	assert.Empty(t, warm.Notes, "a warm-up interval is not recorded: its notes wait for the first measured one")
	iv := s.Cut(0, 0, false)
	require.NotNil(t, iv)
	require.Len(t, iv.Notes, 1)
	assert.Contains(t, iv.Notes[0], "no database server process on h4 (looked for a JVM running no.such.Main)")
	assert.Equal(t, 0, iv.DB.Count)
	assert.Empty(t, s.Cut(0, 0, false).Notes)
}

type fakeInternals struct {
	mu      sync.Mutex
	fail    bool
	partial bool // the queue cannot be read
	value   float64
	host    adapters.Host
	reads   int
}

func (f *fakeInternals) OpenInternals(_ context.Context, h adapters.Host) (adapters.Internals, error) {
	f.mu.Lock()
	f.host = h
	f.mu.Unlock()
	return f, nil
}

func (f *fakeInternals) Read(context.Context) (adapters.InternalsReading, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	if f.fail {
		return adapters.InternalsReading{}, errors.New("connection refused")
	}
	f.value += 100
	r := adapters.InternalsReading{Product: "FakeDB 1", Source: "fake", Metrics: []adapters.Metric{{Name: "ops", Value: f.value, Counter: true}}}
	if f.partial {
		return r, errors.New("queue: can not unmarshal int-like into *float64")
	}
	r.Metrics = append(r.Metrics, adapters.Metric{Name: "queue", Value: 7})
	return r, nil
}

func (f *fakeInternals) Close() error { return nil }

// Internals: counters become rates, a failure is said once and the run
// goes on, a recovery is said too.
func TestSamplerInternals(t *testing.T) {
	fi := &fakeInternals{}
	s, err := Start(Config{Every: 20 * time.Millisecond, Host: "h1", Internals: fi, InternalsEvery: 30 * time.Millisecond, ReadsRemote: true})
	require.NoError(t, err)
	defer s.Close()
	var iv *Interval
	waitFor(t, "a rate", func() (bool, string) {
		iv = s.Cut(0, 0, false)
		if _, ok := iv.Internals.Value("ops_per_sec"); ok {
			return true, ""
		}
		return false, "no ops_per_sec"
	})
	assert.Equal(t, "FakeDB 1", iv.Internals.Product)
	q, _ := iv.Internals.Value("queue")
	assert.Equal(t, 7.0, q)
	r, _ := iv.Internals.Value("ops_per_sec")
	assert.Positive(t, r)
	fi.mu.Lock()
	assert.True(t, fi.host.Remote, "nothing of the server runs here and this process reads a remote one")
	fi.mu.Unlock()

	fi.mu.Lock()
	fi.fail = true
	fi.mu.Unlock()
	var notes []string
	waitFor(t, "the failure noted", func() (bool, string) {
		notes = append(notes, s.Cut(0, 0, false).Notes...)
		return strings.Contains(strings.Join(notes, "\n"), "connection refused"), strings.Join(notes, "|")
	})
	fi.mu.Lock()
	reads := fi.reads
	fi.mu.Unlock()
	waitFor(t, "three more failed reads", func() (bool, string) {
		notes = append(notes, s.Cut(0, 0, false).Notes...)
		fi.mu.Lock()
		defer fi.mu.Unlock()
		return fi.reads >= reads+3, ""
	})
	assert.Equal(t, 1, strings.Count(strings.Join(notes, "\n"), "connection refused"), "said once")
	fi.mu.Lock()
	fi.fail = false
	fi.mu.Unlock()
	waitFor(t, "the recovery noted", func() (bool, string) {
		notes = append(notes, s.Cut(0, 0, false).Notes...)
		return strings.Contains(strings.Join(notes, "\n"), "read again"), strings.Join(notes, "|")
	})

	// A figure that cannot be read while the others can (Cassandra's
	// disk_usage scanned into the wrong type) is said once, naming why,
	// and the others are kept.
	fi.mu.Lock()
	fi.partial = true
	reads = fi.reads
	fi.mu.Unlock()
	waitFor(t, "the partial failure noted, three more reads, the others kept", func() (bool, string) {
		iv = s.Cut(0, 0, false)
		notes = append(notes, iv.Notes...)
		fi.mu.Lock()
		defer fi.mu.Unlock()
		_, queue := iv.Internals.Value("queue")
		_, ops := iv.Internals.Value("ops_per_sec")
		return fi.reads >= reads+3 && strings.Contains(strings.Join(notes, "\n"), "some figures could not be read: queue: can not unmarshal") &&
			!queue && ops, strings.Join(notes, "|")
	})
	assert.Equal(t, 1, strings.Count(strings.Join(notes, "\n"), "some figures could not be read"), "said once")
}

// BenchmarkSample is the sampling cost per agent: one reading of this
// host's /proc (CPU, memory, disks, interfaces, TCP, one database process
// and the load generator), its rates, and a tenth of a 10 s interval's
// summary, plus a thirtieth of a process look (rediscoverEvery). At one
// sample a second, %core is the share of one core it costs.
func BenchmarkSample(b *testing.B) {
	src, err := newSource("/proc", "/sys", os.Getpid())
	require.NoError(b, err)
	fd := &finder{fs: src.fs, self: os.Getpid(), patterns: []adapters.ServerProcess{{Role: "init", Name: "no-such-process"}}}
	db := []int{os.Getppid()}
	prev := src.read(time.Now().UnixNano(), db)
	ss := make([]sample, 0, 10)
	var look time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		cur := src.read(time.Now().UnixNano(), db)
		if smp, err := rates(&prev, &cur); err == nil {
			ss = append(ss, smp)
		}
		prev = cur
		if len(ss) == 10 {
			_ = ToPB(summarize(ss))
			ss = ss[:0]
		}
		if i%30 == 0 {
			// The process look, every 30 s, reads the cgroup's CPU
			// quota too.
			t0 := time.Now()
			_, _ = fd.look()
			_ = src.cgroupCPUQuota("/sys", os.Getpid())
			look += time.Since(t0)
		}
	}
	perSample := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(perSample/1e9*100, "%core")
	_ = look
}

// BenchmarkInternalsReading is the load generator's own part of reading
// the database's internals, once per interval: a reading of thirty
// figures, a third of them counters, turned into the interval's
// internals (rates against the previous reading), then into its wire
// form. The adapter's query itself is the server's time and the
// network's, not measured here (adapters/mongodb's
// BenchmarkServerStatusReading decodes a reply). %core@10s is the CPU it
// costs at one read per 10 s interval. Printed, never asserted.
func BenchmarkInternalsReading(b *testing.B) {
	r := adapters.InternalsReading{Product: "Cassandra 5.0.9", Source: "system_views on 127.0.0.1"}
	for i := range 30 {
		r.Metrics = append(r.Metrics, adapters.Metric{Name: "thread_pool.Stage" + strconv.Itoa(i) + ".completed", Value: float64(i * 1000), Counter: i%3 == 0})
	}
	prev := map[string]float64{}
	now := time.Now().UnixNano()
	prevNs := int64(0)
	for b.Loop() {
		for i := range r.Metrics {
			r.Metrics[i].Value += 100
		}
		now += 10e9
		in := internalsOf(r, prev, prevNs, now)
		prevNs = now
		_ = ToPB(&Interval{Samples: 1, Internals: in})
	}
	perRead := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(perRead/10e9*100, "%core@10s")
}

// A database process whose I/O counters cannot be read (another user's,
// read without CAP_SYS_PTRACE) is said once, naming the remedy; its CPU
// and memory are still read.
func TestSamplerSaysWhenDBIOIsHidden(t *testing.T) {
	f := loadFixture(t)
	proc := filepath.Join(t.TempDir(), "proc")
	require.NoError(t, exec.Command("cp", "-r", "testdata/proc1", proc).Run())
	require.NoError(t, os.Remove(filepath.Join(proc, strconv.Itoa(f.db), "io")))
	s, err := Start(Config{Proc: proc, Sys: "testdata/sys", Self: f.client, Host: "h2", Processes: cassandra, Every: time.Hour})
	require.NoError(t, err)
	defer s.Close()
	notes := strings.Join(s.Cut(0, 0, false).Notes, "\n")
	assert.Contains(t, notes, "cassandra (pid "+strconv.Itoa(f.db)+")")
	assert.Contains(t, notes, "disk I/O and open files cannot be read")
	assert.Contains(t, notes, "CAP_SYS_PTRACE")
	assert.Equal(t, 1, strings.Count(notes, "cannot be read"))
}

// A cut takes the samples that ended in the interval, leaves later ones
// for the next cut and drops earlier ones (a wait for the start); it
// reads nothing itself, so the engine's reporter never waits for /proc.
// (Cut once took a reading of its own through the sampling goroutine and
// waited up to a second for it: on a loaded machine a coordinator run saw
// a 0.2 s interval last 1.2 s.)
func TestCutAssignsSamplesToTheirInterval(t *testing.T) {
	now := time.Now().UnixNano()
	s := &Sampler{}
	for _, ago := range []time.Duration{5 * time.Second, 2500 * time.Millisecond, 1500 * time.Millisecond, 500 * time.Millisecond, 100 * time.Millisecond} {
		s.pending = append(s.pending, sample{ns: now - int64(ago), span: 1, cores: 1, cpu: CPU{User: 10, Idle: 90}})
	}
	s.notes = []string{"found"}
	start, end := now-int64(3*time.Second), now-int64(time.Second)
	iv := s.Cut(start, end, false)
	assert.Equal(t, 2, iv.Samples, "the samples of 2.5 s and 1.5 s ago")
	assert.Equal(t, []string{"found"}, iv.Notes)
	require.Len(t, s.pending, 2, "the two later samples wait for the next cut")
	next := s.Cut(end, now, false)
	assert.Equal(t, 2, next.Samples)
	assert.Empty(t, s.pending)
	assert.Equal(t, 0, s.Cut(now, now+int64(time.Second), false).Samples, "nothing read yet: an empty summary, at once")
	// A reading taken just before that cut's end but handed over after it
	// is not lost: the next interval takes it.
	s.pending = append(s.pending, sample{ns: now + int64(900*time.Millisecond), span: 1, cores: 1, cpu: CPU{User: 10, Idle: 90}})
	assert.Equal(t, 1, s.Cut(now+int64(time.Second), now+int64(2*time.Second), false).Samples)
}

// TestFinderLeavesOutAncestors: a pattern that matches every process
// (".", as a wrapper's command line holding the pattern matches it) never
// counts the load generator or any process it runs under, on this host's
// real process tree (go test, its shell, ...), and names each of those as
// left out; every other process still matches.
func TestFinderLeavesOutAncestors(t *testing.T) {
	src, err := newSource("/proc", "/sys", os.Getpid())
	require.NoError(t, err)
	re, err := ParsePids(".")
	require.NoError(t, err)
	fd := &finder{fs: src.fs, self: os.Getpid(), user: re}
	var chain []int
	for pid := os.Getppid(); pid > 0 && len(chain) < maxAncestry; pid = fd.parent(pid) {
		chain = append(chain, pid)
	}
	require.NotEmpty(t, chain, "this process has a parent")
	out, kin, err := fd.lookAll()
	require.NoError(t, err)
	for _, f := range out {
		assert.NotEqual(t, os.Getpid(), f.pid, "the load generator is never the database")
		assert.NotContains(t, chain, f.pid, "an ancestor (%s) is never the database", f.role)
	}
	left := map[int]string{}
	for _, k := range kin {
		left[k.pid] = k.why
	}
	for i, pid := range chain {
		if _, err := src.fs.Proc(pid); err != nil {
			continue // gone meanwhile
		}
		want := "an ancestor of the load generator"
		if i == 0 {
			want = "the load generator's parent"
		}
		assert.Equal(t, want, left[pid], "ancestor %d (pid %d) is named as left out", i, pid)
	}
	assert.NotEmpty(t, out, "other processes still match")
	assert.Contains(t, describeFound("h", out[:1], kin), "; not counted, though they match: ")
}

// TestSamplerSaysTheDatabaseExited: a server process found and then gone
// is said as exited, with the measured interval in which it was missed,
// and never as a remote database; later cuts have no database figures.
func TestSamplerSaysTheDatabaseExited(t *testing.T) {
	name := "yexit" + strconv.Itoa(os.Getpid())
	if len(name) > 15 {
		name = name[:15]
	}
	sleepBin, err := exec.LookPath("sleep")
	require.NoError(t, err)
	link := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.Symlink(sleepBin, link))
	sleep := exec.Command(link, "60")
	require.NoError(t, sleep.Start())
	t.Cleanup(func() { _ = sleep.Process.Kill(); _ = sleep.Wait() })
	s, err := Start(Config{Every: 20 * time.Millisecond, Host: "h5", DB: "test", Processes: []adapters.ServerProcess{{Role: "server", Name: name}}})
	require.NoError(t, err)
	defer s.Close()
	var notes []string
	cut := func() *Interval {
		iv := s.Cut(0, 0, false)
		notes = append(notes, iv.Notes...)
		return iv
	}
	cut()
	cut()
	require.NoError(t, sleep.Process.Kill())
	_ = sleep.Wait()
	// Two intervals were cut before the kill: it is missed in the third
	// or, on a loaded host whose sampler woke late, a later one.
	said := regexp.MustCompile(`the database process server \(pid ` + strconv.Itoa(sleep.Process.Pid) + `\) exited in interval (\d+) \(last read at `)
	waitFor(t, "the exit said", func() (bool, string) {
		time.Sleep(30 * time.Millisecond)
		cut()
		return said.MatchString(strings.Join(notes, "\n")), strings.Join(notes, "\n")
	})
	all := strings.Join(notes, "\n")
	k, err := strconv.Atoi(said.FindStringSubmatch(all)[1])
	require.NoError(t, err)
	assert.GreaterOrEqual(t, k, 3, "missed after the two intervals cut before the kill")
	assert.Contains(t, all, "no database process is left on this host, so the intervals after it have no database figures")
	assert.NotContains(t, all, "remote")
	time.Sleep(50 * time.Millisecond)
	assert.Equal(t, 0, cut().DB.Count, "no database figures after the exit")
}
