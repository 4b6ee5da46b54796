package report

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/testutil/tools"
)

// The browser tests open the generated pages in headless Chromium (Debian's
// chromium package), as a reader would: the DOM must show that every chart
// drew (the page's #charts-ready marker), the console must stay free of
// errors, and a screenshot of each page is kept for a person to look at.
// Without Chromium they skip, or fail where YCSBCTL_REQUIRE_TOOLS=1 (CI).

func chromium(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	return tools.Chromium(t)
}

// artifactDir keeps screenshots after the test: $YCSBCTL_ARTIFACTS when
// set (CI uploads it), else a directory under the system temp dir.
func artifactDir(t *testing.T) string {
	dir := os.Getenv("YCSBCTL_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "ycsbctl-artifacts")
	}
	dir = filepath.Join(dir, "browser")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func runChromium(t *testing.T, bin string, args ...string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
		"--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, e.String())
	}
	return o.String(), e.String()
}

var consoleError = regexp.MustCompile(`(?i)(Uncaught|CONSOLE.*(error|exception)|SyntaxError|ReferenceError|TypeError)`)

// checkPage loads file in Chromium, returns the charts-ready counts and
// the console errors.
func checkPage(t *testing.T, bin, file string) (count, total, empty int, errs []string) {
	t.Helper()
	dom, logs := runChromium(t, bin, "--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000", "--dump-dom", "file://"+file)
	for _, line := range strings.Split(logs, "\n") {
		if consoleError.MatchString(line) {
			errs = append(errs, line)
		}
	}
	m := regexp.MustCompile(`<div id="charts-ready" data-count="(\d+)" data-total="(\d+)" data-empty="(\d+)">`).FindStringSubmatch(dom)
	if m == nil {
		return -1, -1, -1, errs
	}
	count, _ = strconv.Atoi(m[1])
	total, _ = strconv.Atoi(m[2])
	empty, _ = strconv.Atoi(m[3])
	return count, total, empty, errs
}

func screenshot(t *testing.T, bin, file, png string) {
	t.Helper()
	runChromium(t, bin, "--hide-scrollbars", "--window-size=1400,2000", "--screenshot="+png, "file://"+file)
	fi, err := os.Stat(png)
	if err != nil || fi.Size() < 20_000 {
		t.Fatalf("screenshot %s missing or blank: %v", png, err)
	}
	t.Logf("screenshot: %s", png)
}

func TestBrowserRendersReports(t *testing.T) {
	bin := chromium(t)
	out := artifactDir(t)
	root := t.TempDir()
	local := makeBundle(t, filepath.Join(root, "local"), fixture{db: "basic", workload: "workloada", intervals: 30, rate: 1200, jitter: 0.08, latencyUs: 350, seed: 21, hosts: true})
	dist := makeBundle(t, filepath.Join(root, "dist"), fixture{db: "mongodb", workload: "workloada", agents: 3, intervals: 30, rate: 2400, jitter: 0.05, latencyUs: 600, seed: 22, hosts: true})
	other := makeBundle(t, filepath.Join(root, "cass"), fixture{db: "cassandra", workload: "workloada", agents: 3, intervals: 30, rate: 3100, jitter: 0.05, latencyUs: 450, seed: 23, hosts: true})
	scan := makeBundle(t, filepath.Join(root, "mongo-c"), fixture{db: "mongodb", workload: "workloadc", agents: 3, intervals: 30, rate: 5000, jitter: 0.05, latencyUs: 300, seed: 24})
	scan2 := makeBundle(t, filepath.Join(root, "cass-c"), fixture{db: "cassandra", workload: "workloadc", agents: 3, intervals: 30, rate: 5000, jitter: 0.05, latencyUs: 300, seed: 25})

	pages := map[string]string{}
	for name, dir := range map[string]string{"report-single-host": local, "report-distributed": dist} {
		var buf bytes.Buffer
		if err := WriteHTML(&buf, mustLoad(t, dir), Options{}); err != nil {
			t.Fatal(err)
		}
		pages[name] = writeFile(t, filepath.Join(out, name+".html"), buf.Bytes())
	}
	var cmp bytes.Buffer
	if err := NewComparison([]*Run{mustLoad(t, dist), mustLoad(t, other), mustLoad(t, scan), mustLoad(t, scan2)}).WriteHTML(&cmp, time.Time{}); err != nil {
		t.Fatal(err)
	}
	pages["compare"] = writeFile(t, filepath.Join(out, "compare.html"), cmp.Bytes())
	var capPage bytes.Buffer
	if err := WriteCapacityHTML(&capPage, capacityFixture(), Options{}); err != nil {
		t.Fatal(err)
	}
	pages["capacity"] = writeFile(t, filepath.Join(out, "capacity.html"), capPage.Bytes())
	var suitePage bytes.Buffer
	if err := suiteCapacityFixture(mustLoad(t, other)).WriteHTML(&suitePage, time.Time{}); err != nil {
		t.Fatal(err)
	}
	pages["suite-capacity"] = writeFile(t, filepath.Join(out, "suite-capacity.html"), suitePage.Bytes())

	for name, file := range pages {
		t.Run(name, func(t *testing.T) {
			count, total, empty, errs := checkPage(t, bin, file)
			if count < 0 {
				t.Fatal("no #charts-ready marker in the DOM: the page's script did not run")
			}
			if total == 0 || empty != 0 || count != total {
				t.Errorf("charts: %d drawn of %d (%d empty)", count, total, empty)
			}
			checkHostPanels(t, bin, name, file)
			if len(errs) > 0 {
				t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
			}
			screenshot(t, bin, file, strings.TrimSuffix(file, ".html")+".png")
		})
	}
}

// checkHostPanels: every host's panel drew in the browser (its charts are
// among those counted above; here each is found in the rendered DOM with
// its points, the CPU chart with its stacked bands), and the account of
// where the time went is on the page.
func checkHostPanels(t *testing.T, bin, name, file string) {
	t.Helper()
	dom, _ := runChromium(t, bin, "--virtual-time-budget=5000", "--dump-dom", "file://"+file)
	hosts := map[string]int{"report-single-host": 1, "report-distributed": 3, "compare": 0}[name]
	for a := range hosts {
		for _, id := range []string{"cpu", "disk", "util", "net", "proc-cpu", "proc-rss"} {
			m := regexp.MustCompile(`<svg class="chart" id="host` + strconv.Itoa(a) + `-` + id + `" data-points="(\d+)"`).FindStringSubmatch(dom)
			if m == nil || m[1] == "0" {
				t.Errorf("%s: host %d chart %s missing or empty (%v)", name, a, id, m)
			}
		}
		if n := strings.Count(dom, `<path class="band" data-series="user"`); n < hosts {
			t.Errorf("%s: %d stacked CPU bands, want one per host (%d)", name, n, hosts)
		}
	}
	if hosts > 0 && !strings.Contains(dom, "Hosts: where the time went") {
		t.Errorf("%s: no hosts section", name)
	}
	if name == "compare" && !strings.Contains(dom, `id="compare-host-cpu"`) {
		t.Errorf("compare: no host chart")
	}
}

// TestBrowserCatchesErrors is the control: a page whose script throws must
// be caught by the same checks, or the test above proves nothing.
func TestBrowserCatchesErrors(t *testing.T) {
	bin := chromium(t)
	file := writeFile(t, filepath.Join(t.TempDir(), "broken.html"), []byte(`<!DOCTYPE html><html><body><svg class="chart"></svg><script>undefinedFunction();</script></body></html>`))
	count, _, _, errs := checkPage(t, bin, file)
	if count >= 0 || len(errs) == 0 {
		t.Fatalf("a throwing page passed: marker %d, errors %v", count, errs)
	}
}

func mustLoad(t *testing.T, dir string) *Run {
	t.Helper()
	r, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func writeFile(t *testing.T, path string, b []byte) string {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
