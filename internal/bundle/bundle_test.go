package bundle

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/sink/hlog"
)

func TestRedact(t *testing.T) {
	got := Redact(map[string]string{
		"mongodb.url":        "mongodb://u:pw@h1:27017,mongodb://v:pw2@h2/db",
		"cassandra.password": "hunter2",
		"hbase.token":        "",
		"plain":              "value@x",
	})
	if strings.Contains(got["mongodb.url"], "pw") || got["cassandra.password"] != "REDACTED" || got["hbase.token"] != "" || got["plain"] != "value@x" {
		t.Fatalf("%v", got)
	}
}

func TestTag(t *testing.T) {
	s := measurement.SeriesOf(measurement.Read, measurement.Intended, true)
	if Tag(s, -1) != "Intended-READ-FAILED.all" || Tag(s, 3) != "Intended-READ-FAILED.agent-3" {
		t.Fatal(Tag(s, -1), Tag(s, 3))
	}
}

// TestHistogramsPlainTags reads a log written with YCSB-style tags (the
// hdrhistogram.fileoutput log), which has no ".all" lines.
func TestHistogramsPlainTags(t *testing.T) {
	var buf bytes.Buffer
	w := hlog.NewWriter(&buf, time.Unix(1_700_000_000, 0))
	h := measurement.NewHistogram()
	_ = h.RecordValues(1_000_000, 10)
	for i := range 3 {
		if err := w.WriteInterval("READ", int64(i)*1e9, int64(i+1)*1e9, h); err != nil {
			t.Fatal(err)
		}
	}
	hs, err := ReadHistograms(&buf, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := hs.All[measurement.SeriesOf(measurement.Read, measurement.Service, false)].TotalCount(); got != 30 {
		t.Fatalf("READ total %d, want 30", got)
	}
}

func TestScanHlogRejectsGarbage(t *testing.T) {
	for _, bad := range []string{"Tag=READ.all\n", "1,2,3\n", "x,1,2,HISTF\n"} {
		if err := ScanHlog(strings.NewReader(bad), func(*HlogLine) error { return nil }); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
	var l *HlogLine
	_ = ScanHlog(strings.NewReader("Tag=READ.all,1.0,1.0,1.0,!!!\n"), func(x *HlogLine) error { l = x; return nil })
	if l == nil {
		t.Fatal("line not scanned")
	}
	if _, err := l.Decode(nil); err == nil {
		t.Error("bad payload decoded")
	}
}

func TestReadAcceptsRunJSONPath(t *testing.T) {
	dir := t.TempDir()
	if err := WriteRun(dir, &Run{RunID: "x", Summary: Summary{Lines: []string{"[OVERALL], RunTime(ms), 1"}}}); err != nil {
		t.Fatal(err)
	}
	b, err := Read(filepath.Join(dir, FileRunJSON))
	if err != nil || b.Run.RunID != "x" || !strings.Contains(b.Summary, "[OVERALL]") {
		t.Fatalf("%v %+v", err, b)
	}
	if _, err := os.Stat(filepath.Join(dir, FileRunJSON+".tmp")); err == nil {
		t.Error("temporary file left behind")
	}
	if _, err := Read(t.TempDir()); err == nil {
		t.Error("empty directory read as a bundle")
	}
}

func TestRedactMultiHostURL(t *testing.T) {
	in := map[string]string{
		"mongodb.url":          "mongodb://ycsb:hunter2@db1:27017,db2:27017/ycsb?w=1",
		"cassandra.password":   "hunter2",
		"hbase.auth.token":     "abc",
		"some.secretkey":       "k",
		"recordcount":          "1000",
		"mongodb.url.nopass":   "mongodb://db1:27017/ycsb",
		"cassandra.username":   "ycsb",
		"broken":               "http://user:pa%zz@host",
		"ycsbctl.insertstripe": "1",
	}
	out := Redact(in)
	for k, v := range out {
		if strings.Contains(v, "hunter2") || v == "abc" || v == "k" || strings.Contains(v, "pa%zz") {
			t.Errorf("%s leaked: %s", k, v)
		}
	}
	if out["recordcount"] != "1000" || out["cassandra.username"] != "ycsb" || out["mongodb.url.nopass"] != in["mongodb.url.nopass"] {
		t.Errorf("non-secrets changed: %v", out)
	}
	if !strings.HasPrefix(out["mongodb.url"], "mongodb://ycsb:") || !strings.HasSuffix(out["mongodb.url"], "@db1:27017,db2:27017/ycsb?w=1") {
		t.Errorf("url over-redacted: %s", out["mongodb.url"])
	}
}

func TestRedactArgs(t *testing.T) {
	in := []string{"run", "cassandra", "-p", "cassandra.password=hunter2", "-p", "mongodb.url=mongodb://u:hunter2@h1,h2/ycsb",
		"--token", "hunter2", "--token=hunter2", "-p", "recordcount=10", "--tls-cert", "a.pem"}
	out := RedactArgs(in)
	joined := strings.Join(out, " ")
	if strings.Contains(joined, "hunter2") {
		t.Fatalf("leaked: %s", joined)
	}
	for _, keep := range []string{"run", "cassandra", "recordcount=10", "--tls-cert", "a.pem", "cassandra.password=REDACTED", "@h1,h2/ycsb"} {
		if !strings.Contains(joined, keep) {
			t.Errorf("lost %q: %s", keep, joined)
		}
	}
	if len(out) != len(in) {
		t.Fatalf("length changed: %v", out)
	}
}

// TestWriteRunRedacts: run.json hides secrets even when a writer passes
// them in clear.
func TestWriteRunRedacts(t *testing.T) {
	dir := t.TempDir()
	r := &Run{RunID: "x", Error: "dial mongodb://u:hunter2@h failed", ExitReason: "error",
		Agents: []Agent{{Index: 0, Error: "auth failed: password=hunter3"}},
		Config: Config{Properties: map[string]string{"cassandra.password": "hunter4", "recordcount": "10"},
			CommandLine: []string{"run", "-p", "cassandra.password=hunter4", "--token", "hunter5"}}}
	if err := WriteRun(dir, r); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, FileRunJSON))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"hunter2", "hunter3", "hunter4", "hunter5"} {
		if strings.Contains(string(b), s) {
			t.Errorf("run.json holds %s:\n%s", s, b)
		}
	}
	if !strings.Contains(string(b), `"recordcount": "10"`) || !strings.Contains(string(b), "REDACTED") {
		t.Errorf("run.json:\n%s", b)
	}
	if r.Config.Properties["cassandra.password"] != "hunter4" || r.Agents[0].Error != "auth failed: password=hunter3" {
		t.Error("WriteRun modified its argument")
	}
}

// A write that fails (a full file system, a path that cannot be replaced)
// leaves no temporary file behind.
func TestWriteLeavesNoTemporaryFileOnFailure(t *testing.T) {
	dir := t.TempDir()
	// run.json as a directory: the temporary file is written, the rename
	// over it fails.
	if err := os.MkdirAll(filepath.Join(dir, FileRunJSON, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteRun(dir, &Run{RunID: "r"}); err == nil {
		t.Fatal("writing over a directory succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, FileRunJSON+".tmp")); !os.IsNotExist(err) {
		t.Fatalf("a temporary file was left behind: %v", err)
	}
}

// TestMainSeriesFollowsTheMix: the series that stands for a run is the
// mix's heaviest operation, not whichever ran more often, so a sweep
// shows one series for every value.
func TestMainSeriesFollowsTheMix(t *testing.T) {
	series := []SeriesStats{{Series: "READ", Count: 10}, {Series: "UPDATE", Count: 900}, {Series: "SCAN", Count: 5}}
	cases := []struct {
		phase string
		props map[string]string
		want  string
	}{
		{"run", map[string]string{"readproportion": "0.5", "updateproportion": "0.5"}, "READ"},
		{"run", map[string]string{"readproportion": "0.05", "updateproportion": "0", "scanproportion": "0.95"}, "SCAN"},
		{"run", map[string]string{"readproportion": "0", "updateproportion": "0", "readmodifywriteproportion": "1"}, "READ-MODIFY-WRITE"},
		{"load", map[string]string{"readproportion": "1"}, "INSERT"},
		// Unparseable properties: the most frequent successful series.
		{"run", map[string]string{"readproportion": "lots"}, "UPDATE"},
	}
	for _, c := range cases {
		r := &Run{Phase: c.phase, Config: Config{Properties: c.props}, Summary: Summary{Series: series}}
		if got := r.MainSeries(); got != c.want {
			t.Errorf("%s %v: main series %q, want %q", c.phase, c.props, got, c.want)
		}
	}
}
