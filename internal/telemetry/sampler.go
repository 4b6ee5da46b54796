package telemetry

import (
	"context"
	"fmt"
	"net"
	"os"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/ycsbctl/ycsbctl/adapters"
)

// Config is what a sampler reads and where it says what it could not.
type Config struct {
	// Proc and Sys are the proc and sys mount points ("" for /proc and
	// /sys; tests give recorded snapshots).
	Proc, Sys string
	// Every is how often the host is read (default 1 s).
	Every time.Duration
	// Self is the load generator's pid (default this process).
	Self int
	// Host names this host in notes; DB the database, by adapter name.
	Host, DB string
	// Processes are the adapter's server processes; Pids the user's
	// (ycsbctl.telemetry.pids), which replace them when set.
	Processes []adapters.ServerProcess
	Pids      Pids
	// Internals reads the database's internals when set, about every
	// InternalsEvery (default 10 s: the status interval).
	Internals      adapters.InternalsSource
	InternalsEvery time.Duration
	// ReadsRemote says this load generator reads a remote database's
	// internals when no server process runs on its host (a single host,
	// or agent 0 of a distributed run).
	ReadsRemote bool
	// Logf receives each note as it is made.
	Logf func(format string, args ...any)
}

// rediscoverEvery is how often the sampler looks for the server's
// processes again (a restarted server has a new pid).
const rediscoverEvery = 30 * time.Second

// maxPending bounds the samples kept between two cuts (an agent prepared
// and waiting for its start keeps reading): an hour of seconds.
const maxPending = 3600

// Sampler reads one host once a second on a goroutine of its own and
// summarises what it read for each interval the engine cuts.
type Sampler struct {
	cfg  Config
	src  *source
	find *finder
	stop chan struct{}
	done chan struct{}

	// Owned by the sampling goroutine.
	prev      *reading
	found     []found
	lastLook  time.Time
	missingOK bool
	hiddenOK  bool

	// mu guards what the sampling goroutine hands to Cut: the samples
	// not yet cut, the notes, the latest internals.
	mu      sync.Mutex
	pending []sample
	notes   []string
	// cutOnce says a cut has been made: what was read before the run
	// started has been dropped. measuredCuts counts the measured
	// intervals cut, to place a note in the run.
	cutOnce      bool
	measuredCuts int64
	// latest is the newest internals reading not yet handed to a cut.
	latest   *Internals
	latestNs int64
	// quota is the load generator's cgroup CPU quota in CPUs (0: none),
	// read with the process look (a cut reads no file).
	quota float64

	intCancel context.CancelFunc
	intDone   chan struct{}
}

// Start begins sampling. It fails only when the proc file system cannot
// be read at all; the caller says so once and runs without telemetry.
func Start(cfg Config) (*Sampler, error) {
	if cfg.Every <= 0 {
		cfg.Every = time.Second
	}
	if cfg.InternalsEvery <= 0 {
		cfg.InternalsEvery = 10 * time.Second
	}
	if cfg.Self == 0 {
		cfg.Self = os.Getpid()
	}
	if cfg.Proc == "" {
		cfg.Proc = "/proc"
	}
	if cfg.Sys == "" {
		cfg.Sys = "/sys"
	}
	if cfg.Host == "" {
		cfg.Host, _ = os.Hostname()
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	src, err := newSource(cfg.Proc, cfg.Sys, cfg.Self)
	if err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	if _, err := src.fs.Stat(); err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	own := localAddrs()
	s := &Sampler{cfg: cfg, src: src, stop: make(chan struct{}), done: make(chan struct{}),
		find: &finder{fs: src.fs, self: cfg.Self, patterns: cfg.Processes, user: cfg.Pids, listen: endpointsByRole(cfg.Processes, own)}}
	// The first look and reading happen before Start returns: the
	// internals need to know whether the server runs here, and the first
	// second of the run has a reading to count from.
	s.discover(true)
	s.take(time.Now().UnixNano())
	if cfg.Internals != nil {
		ctx, cancel := context.WithCancel(context.Background())
		s.intCancel, s.intDone = cancel, make(chan struct{})
		host := adapters.Host{Addrs: own, Roles: rolesOf(s.found)}
		host.Remote = len(s.found) == 0 && cfg.ReadsRemote
		go s.internalsLoop(ctx, host)
	}
	go s.loop()
	return s, nil
}

func (s *Sampler) note(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.cfg.Logf("%s", msg)
	s.mu.Lock()
	if len(s.notes) < 64 {
		s.notes = append(s.notes, msg)
	}
	s.mu.Unlock()
}

func (s *Sampler) loop() {
	defer close(s.done)
	t := time.NewTicker(s.cfg.Every)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.take(time.Now().UnixNano())
		}
	}
}

// take reads the host once and keeps the second since the last reading.
func (s *Sampler) take(ns int64) {
	if time.Since(s.lastLook) >= rediscoverEvery || s.gone() {
		s.discover(false)
	}
	r := s.src.read(ns, pidsOf(s.found))
	if d := r.describe(); d != "" && !s.missingOK {
		s.missingOK = true
		s.note("telemetry on %s: %s (left out)", s.cfg.Host, d)
	}
	if r.hiddenIO != nil && !s.hiddenOK {
		s.hiddenOK = true
		s.note("telemetry on %s: the database processes' disk I/O and open files cannot be read (%v): they run as another user; give the load generator CAP_DAC_READ_SEARCH and CAP_SYS_PTRACE (the Ansible role's ycsbctl_read_db_processes) or run it as their user. Their CPU, memory and threads are read", s.cfg.Host, r.hiddenIO)
	}
	if s.prev != nil {
		if smp, err := rates(s.prev, &r); err == nil {
			s.mu.Lock()
			if len(s.pending) == maxPending {
				s.pending = append(s.pending[:0], s.pending[1:]...)
			}
			s.pending = append(s.pending, smp)
			s.mu.Unlock()
		}
	}
	s.prev = &r
}

// gone reports whether a found process has exited since the last look.
func (s *Sampler) gone() bool {
	for _, f := range s.found {
		if _, err := s.src.fs.Proc(f.pid); err != nil {
			return true
		}
	}
	return false
}

// discover looks for the server's processes and notes what changed: on
// the first look what was found, or that nothing was (said once).
func (s *Sampler) discover(first bool) {
	s.lastLook = time.Now()
	q := s.src.cgroupCPUQuota(s.cfg.Sys, s.cfg.Self)
	s.mu.Lock()
	s.quota = q
	s.mu.Unlock()
	if !s.find.user.Set() && len(s.find.patterns) == 0 {
		if first {
			s.note("telemetry on %s: the %s adapter names no server process and %s is not set: host and load generator figures only", s.cfg.Host, s.cfg.DB, PropPids)
		}
		return
	}
	fs, kin, err := s.find.lookAll()
	if err != nil {
		if first {
			s.note("telemetry on %s: looking for the database's processes: %v", s.cfg.Host, err)
		}
		return
	}
	s.noteGone(fs)
	switch {
	case len(fs) > 0 && !samePids(fs, s.found):
		s.note("%s", describeFound(s.cfg.Host, fs, kin))
	case len(fs) == 0 && first:
		// Never seen here: the database runs elsewhere. One that ran
		// here and exited is said by noteGone, never called remote.
		msg := fmt.Sprintf("telemetry: no database server process on %s (looked for %s): a remote database, its figures are not shown for this host", s.cfg.Host, s.find.what())
		if len(kin) > 0 {
			msg += "; not counted, though they match: " + listFound(kin)
		}
		s.note("%s", msg)
	}
	s.found = fs
}

// noteGone says which of the database processes found before are no
// longer among fs: exited (or no longer matching), when (the interval
// being measured, and the times of the last reading that had it and of
// this look) and that the intervals after it have none of its figures.
// A database that exits mid-run is not a remote database.
func (s *Sampler) noteGone(fs []found) {
	now := time.Now().UnixNano()
	for _, f := range s.found {
		if containsPid(fs, f.pid) {
			continue
		}
		what := "exited"
		if _, err := s.src.fs.Proc(f.pid); err == nil {
			what = "no longer matches what the sampler looks for (" + s.find.what() + ")"
		}
		at := "missing at " + clockTime(now) + " UTC"
		if s.prev != nil {
			at = "last read at " + clockTime(s.prev.ns) + ", " + at
		}
		rest := "the intervals after it have no figures of it"
		if len(fs) == 0 {
			rest = fmt.Sprintf("no database process is left on this host, so the intervals after it have no database figures (looked for again every %s)", rediscoverEvery)
		}
		s.note("telemetry on %s: the database process %s (pid %d) %s %s (%s): %s", s.cfg.Host, f.role, f.pid, what, s.when(), at, rest)
	}
}

// when places a moment of the run for a note: the measured interval it
// falls in (the engine's seq: the first measured interval is 1).
func (s *Sampler) when() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.measuredCuts == 0 {
		return "before the measured run"
	}
	return fmt.Sprintf("in interval %d", s.measuredCuts+1)
}

func clockTime(ns int64) string { return time.Unix(0, ns).UTC().Format("15:04:05.000") }

func containsPid(fs []found, pid int) bool {
	for _, f := range fs {
		if f.pid == pid {
			return true
		}
	}
	return false
}

// Cut summarises the interval the engine has just cut, [startNs, endNs]
// on its clock: the 1 s samples that ended in it (a sample belongs to the
// interval in which it ends; at the first cut samples from before
// startNs, such as a wait for the start, are dropped; later ones wait for
// the next cut, and one read just before a cut but handed over after it
// goes to the next interval rather than being lost). It only
// takes what the sampling goroutine has read, so the engine's reporter,
// which calls it, never waits for /proc. An interval shorter than a
// second may hold no sample (Samples 0). A warm-up interval, which no
// record keeps, leaves the notes for the first measured one.
func (s *Sampler) Cut(startNs, endNs int64, warmup bool) *Interval {
	now := time.Now().UnixNano()
	// A fake clock (tests) gives times that are not the samples': take
	// what there is.
	plausible := startNs > now-int64(time.Hour) && endNs <= now+int64(time.Minute) && startNs <= endNs
	s.mu.Lock()
	first := !s.cutOnce
	s.cutOnce = true
	if !warmup {
		s.measuredCuts++
	}
	var keep []sample
	rest := s.pending[:0]
	for _, smp := range s.pending {
		switch {
		case plausible && smp.ns > endNs:
			rest = append(rest, smp)
		case !plausible || !first || smp.ns > startNs:
			keep = append(keep, smp)
		}
	}
	s.pending = rest
	var in *Internals
	if s.latest != nil && (!plausible || s.latestNs > startNs) {
		in = s.latest
		s.latest = nil
	}
	var notes []string
	if !warmup {
		notes, s.notes = s.notes, nil
	}
	q := s.quota
	s.mu.Unlock()
	iv := summarize(keep)
	iv.Internals, iv.Notes = in, notes
	if iv.Samples > 0 {
		// GOMAXPROCS is this process's: the load generator's when it
		// samples itself, as it does outside tests.
		procs := 0
		if s.cfg.Self == os.Getpid() {
			procs = runtime.GOMAXPROCS(0)
		}
		iv.ClientCPUs = clientCPUs(procs, q)
	}
	return iv
}

// Close stops sampling and the internals' connections.
func (s *Sampler) Close() {
	select {
	case <-s.stop:
		return
	default:
	}
	close(s.stop)
	<-s.done
	if s.intCancel != nil {
		s.intCancel()
		<-s.intDone
	}
}

// internalsLoop reads the database's internals on connections of their
// own, about once per interval, off the sampling goroutine (a slow server
// must not delay the host's readings). A failure is said once; reading
// goes on, and a recovery is said too.
func (s *Sampler) internalsLoop(ctx context.Context, host adapters.Host) {
	defer close(s.intDone)
	every := s.cfg.InternalsEvery
	// A read must fit in an interval; a first connection on a loaded
	// host may take longer (it runs aside, the host's readings go on).
	timeout := min(every, 10*time.Second)
	openTimeout := max(timeout, 20*time.Second)
	var in adapters.Internals
	defer func() {
		if in != nil {
			_ = in.Close()
		}
	}()
	failing, partial := false, false
	fail := func(what string, err error) {
		if !failing {
			failing = true
			s.note("telemetry: database internals on %s: %s: %v (the run goes on without them; tried again every %s)", s.cfg.Host, what, err, every)
		}
	}
	prev := map[string]float64{}
	var prevNs int64
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if in == nil {
			octx, cancel := context.WithTimeout(ctx, openTimeout)
			var err error
			in, err = s.cfg.Internals.OpenInternals(octx, host)
			cancel()
			switch {
			case err != nil:
				fail("cannot connect", err)
			case in == nil:
				// Nothing to read from this host: no node of the server
				// runs here and another load generator reads a remote one.
				return
			}
		}
		if in != nil {
			rctx, cancel := context.WithTimeout(ctx, timeout)
			r, err := in.Read(rctx)
			cancel()
			now := time.Now().UnixNano()
			if err != nil && len(r.Metrics) == 0 {
				fail("reading", err)
			} else {
				if failing {
					failing = false
					s.note("telemetry: database internals on %s: read again (%s)", s.cfg.Host, r.Source)
				}
				if err != nil && !partial {
					partial = true
					s.note("telemetry: database internals on %s: some figures could not be read: %v (the others are kept; said once)", s.cfg.Host, err)
				}
				out := internalsOf(r, prev, prevNs, now)
				prevNs = now
				s.mu.Lock()
				s.latest, s.latestNs = out, now
				s.mu.Unlock()
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// internalsOf turns an adapter's reading at now into an interval's
// internals: counters (which only grow) become rates per second against
// prev, the counters of the reading at prevNs (0: none yet), which it
// updates.
func internalsOf(r adapters.InternalsReading, prev map[string]float64, prevNs, now int64) *Internals {
	out := &Internals{Product: r.Product, Source: r.Source}
	for _, m := range r.Metrics {
		if !m.Counter {
			out.Metrics = append(out.Metrics, Metric{Name: m.Name, Value: m.Value})
			continue
		}
		if p, ok := prev[m.Name]; ok && prevNs > 0 && now > prevNs && m.Value >= p {
			out.Metrics = append(out.Metrics, Metric{Name: m.Name + "_per_sec", Value: (m.Value - p) / (float64(now-prevNs) / 1e9)})
		}
		prev[m.Name] = m.Value
	}
	sort.Slice(out.Metrics, func(i, j int) bool { return out.Metrics[i].Name < out.Metrics[j].Name })
	return out
}

// localAddrs lists the host's own IP addresses, loopback included.
func localAddrs() []string {
	out := []string{"127.0.0.1", "::1"}
	as, err := net.InterfaceAddrs()
	if err != nil {
		return out
	}
	for _, a := range as {
		if n, ok := a.(*net.IPNet); ok {
			out = append(out, n.IP.String())
		}
	}
	return out
}
