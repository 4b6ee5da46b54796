package properties

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ycsbctl/ycsbctl/internal/testutil/tools"
)

// goldenFile holds inputs and what JDK 17's Properties.load(InputStream)
// made of them (testdata/JavaProperties.java's output lines).
const goldenFile = "testdata/java_properties.json"

type golden struct {
	GeneratedBy string   `json:"generated_by"`
	Vectors     []vector `json:"vectors"`
}

type vector struct {
	Name  string `json:"name"`
	Input string `json:"input_hex"`
	Want  string `json:"want"`
}

// javaLine is what JavaProperties.java prints for an input, computed by
// the Go reader: "ERR ..." (only "ERR" is compared: Java names its
// exception, Load says the line) or "OK" and " keyhex=valuehex" per
// property in key order.
func javaLine(in []byte) string {
	p := New()
	if _, err := p.LoadText(in); err != nil {
		return "ERR"
	}
	line := []string{"OK"}
	for _, k := range p.Keys() {
		v, _ := p.Lookup(k)
		line = append(line, hex.EncodeToString([]byte(k))+"="+hex.EncodeToString([]byte(v)))
	}
	return strings.Join(line, " ")
}

// TestJavaPropertiesGolden reads every input as JDK 17's
// java.util.Properties.load(InputStream) read it when the vectors were
// made: the named cases of Java's syntax and escapes, and random strings
// of its special characters, ISO-8859-1 and UTF-8 bytes.
func TestJavaPropertiesGolden(t *testing.T) {
	b, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Vectors) < 400 {
		t.Fatalf("%d vectors", len(g.Vectors))
	}
	for _, v := range g.Vectors {
		in, err := hex.DecodeString(v.Input)
		if err != nil {
			t.Fatal(err)
		}
		want := v.Want
		if strings.HasPrefix(want, "ERR") {
			want = "ERR"
		}
		if got := javaLine(in); got != want {
			t.Errorf("%s: input %q\n got: %s\nwant: %s", v.Name, in, got, want)
		}
	}
}

// goldenInputs are the named cases, then random ones.
func goldenInputs() []vector {
	named := []struct{ name, text string }{
		{"equals", "a=1\nb = 2\n"},
		{"colon", "a:1\nb : 2\n"},
		{"blank separators", "a 1\nb\t2\nc\f3\n"},
		{"blanks then equals", "key   =   value"},
		{"only the first separator", "a=b=c\nd:e:f\ng h=i"},
		{"a second separator after blanks", "k = = v\nl : : w\nm  =:x"},
		{"separators doubled", "k==v\nl::w\nm=:x\nn:=y"},
		{"comments", "# c\n! c\n  # indented\n\t! also\na=1"},
		{"comment with latin-1 and utf-8", "# caf\xe9 caf\xc3\xa9\na=1"},
		{"a comment ending in a backslash", "# c \\\na=1"},
		{"hash inside a value", "a=1 # not a comment"},
		{"escaped hash key", "\\#k=v\n\\!l=w"},
		{"blank lines", "\n\n   \na=1\n\t\n"},
		{"empty values", "a=\nb\nc:\nd   \n=v\n:w\n =x"},
		{"continuation", "a=one, \\\n    two, \\\n    three\nb=2"},
		{"continuation line starting with a hash", "a=x\\\n#y\n"},
		{"empty continuation then a hash line", "\\\n# x\nk=v"},
		{"empty continuations", "\\\n\\\nk=v"},
		{"continuation inside a key", "k\\\n  ey=v"},
		{"continuation before the separator", "k\\\n=v"},
		{"even backslashes", "a=x\\\\\nb=2"},
		{"three backslashes", "a=x\\\\\\\nb=2"},
		{"continuation at the end", "a=x\\"},
		{"continuation then end of line at the end", "a=x\\\n"},
		{"an empty key from a backslash at the end", "k=v\n\\\n"},
		{"a backslash and cr at the end", "k=v\n\\\r"},
		{"a backslash and crlf at the end", "k=v\n\\\r\n"},
		{"an empty line ends a continuation", "a=x\\\n\nb=2"},
		{"a blank line ends a continuation", "a=x\\\n   \nb=2"},
		{"crlf", "a=1\r\nb=2\r\n"},
		{"lone cr", "a=1\rb=2\rc=3"},
		{"crlf continuation", "a=x\\\r\n   y\r\nb=2"},
		{"cr continuation", "a=x\\\r   y\rb=2"},
		{"cr continuation then lf", "a=x\\\r\n\nb=2"},
		{"blank lines of cr", "\r\r\n\r\na=1\r"},
		{"escapes", "a=tab\\there\\nnl\\rcr\\fff\\b\\q\\\\"},
		{"escaped separators in a key", "my\\ key\\:x\\=y = v"},
		{"escaped blank value start", "k=\\ v\nl= \\ w"},
		{"unicode escapes", "a=caf\\u00e9 \\u0041\n\\u006b=\\u00E9"},
		{"surrogate pair", "k=\\uD83D\\uDE00"},
		{"lone high surrogate", "k=\\uD83D"},
		{"lone high surrogate then a character", "k=\\uD83Dx"},
		{"lone low surrogate", "k=\\uDE00"},
		{"swapped surrogates", "k=\\uDE00\\uD83D"},
		{"high surrogate twice", "k=\\uD83D\\uD83D\\uDE00"},
		{"escaped newline", "k=a\\u000ab"},
		{"malformed: short", "k=\\u12"},
		{"malformed: end", "k=tail\\u"},
		{"malformed: not hex", "k=a\\uZZZZ"},
		{"malformed: a sign", "k=\\u+123"},
		{"malformed: a blank", "k=\\u 123"},
		{"malformed: in a key", "\\uXYZW=1"},
		{"malformed: short before the separator", "k\\u00=1"},
		{"malformed after a continuation", "a=1\nk=x\\\n  \\u00G0\n"},
		{"latin-1 bytes", "keyprefix=caf\xe9\nx=\xff\x80\x9f\xa0"},
		{"utf-8 bytes", "keyprefix=caf\xc3\xa9\neuro=\xe2\x82\xac\nsmile=\xf0\x9f\x98\x80"},
		{"latin-1 key", "caf\xe9=1"},
		{"latin-1 blank-like bytes", "k\xa0=v\nl=\xa0w"},
		{"later key wins", "a=1\na=2"},
		{"leading form feed", "\f k=v"},
		{"ycsb workload", "recordcount=1000\nworkload=site.ycsb.workloads.CoreWorkload\nreadproportion=0.5\n"},
		{"long line", "k=" + strings.Repeat("x", 9000) + "\\\n" + strings.Repeat("y", 9000)},
		{"a backslash at a buffer's end", strings.Repeat("#", 8190) + "\nk=\\\r\nv"},
	}
	var out []vector
	for _, n := range named {
		out = append(out, vector{Name: n.name, Input: hex.EncodeToString([]byte(n.text))})
	}
	tokens := []string{"a", "b", "k", "=", ":", " ", "\t", "\f", "\r", "\n", "\r\n", "\\", "\\\\", "#", "!",
		"\\u", "00e9", "D83D", "DE00", "0041", "zz", "\xe9", "\xc3\xa9", "\xe2\x82\xac", "\\\n", "\\\r\n", "x y", "\\t", "\\ "}
	rng := rand.New(rand.NewPCG(34, 7))
	for i := 0; i < 500; i++ {
		var b strings.Builder
		for j := rng.IntN(14) + 1; j > 0; j-- {
			b.WriteString(tokens[rng.IntN(len(tokens))])
		}
		out = append(out, vector{Name: "random " + string(rune('a'+i%26)) + strings.Repeat("'", i/26), Input: hex.EncodeToString([]byte(b.String()))})
	}
	return out
}

// TestRegenerateJavaVectors rewrites the golden file from a JDK 17 (run
// with YCSBCTL_REGEN_JAVA_VECTORS=1): it compiles
// testdata/JavaProperties.java and runs it on every input.
func TestRegenerateJavaVectors(t *testing.T) {
	if os.Getenv("YCSBCTL_REGEN_JAVA_VECTORS") != "1" {
		t.Skip("YCSBCTL_REGEN_JAVA_VECTORS=1 regenerates " + goldenFile)
	}
	java := tools.Java17(t)
	javac := filepath.Join(filepath.Dir(java), "javac")
	dir := t.TempDir()
	if out, err := exec.Command(javac, "-d", dir, "testdata/JavaProperties.java").CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	vs := goldenInputs()
	var in bytes.Buffer
	for _, v := range vs {
		in.WriteString(v.Input + "\n")
	}
	cmd := exec.Command(java, "-cp", dir, "JavaProperties")
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(vs) {
		t.Fatalf("%d lines for %d inputs", len(lines), len(vs))
	}
	for i := range vs {
		vs[i].Want = lines[i]
	}
	ver, _ := exec.Command(java, "-version").CombinedOutput()
	g := golden{GeneratedBy: strings.TrimSpace(strings.SplitN(string(ver), "\n", 2)[0]) + ": java.util.Properties.load(InputStream), testdata/JavaProperties.java", Vectors: vs}
	b, err := json.MarshalIndent(g, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(goldenFile, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %d vectors", len(vs))
}
