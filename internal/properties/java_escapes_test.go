package properties

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestJavaEscapes pins escape handling to what java.util.Properties (JDK
// 17) does with the same text, checked by loading each case there.
func TestJavaEscapes(t *testing.T) {
	tests := []struct {
		text, key, want string
	}{
		{`k=\q`, "k", "q"},               // unknown escape: the character itself
		{`k=a\=b\:c\\d`, "k", `a=b:c\d`}, // escaped separators and backslash
		{`k=\u00e9x`, "k", "éx"},         // \uXXXX
		{`k=\u00E9`, "k", "é"},           // upper-case hex
		{`k=\uD83D\uDE00`, "k", "😀"},     // a surrogate pair is one character
		{`k=\t\n\r\f`, "k", "\t\n\r\f"},  // control escapes
		{"k=ab\\\n  cd", "k", "abcd"},    // continuation drops leading blanks
		{`k\ x=1`, "k x", "1"},           // escaped space in a key
		{`\u006b=v`, "k", "v"},           // escapes in keys
		{`k=\uD83D`, "k", "?"},           // a lone surrogate: Java's UTF-8 encoder writes "?"
		{`k=trailing\`, "k", "trailing"}, // a final continuation at the end of input
	}
	for _, tc := range tests {
		p := New()
		if err := p.Load(strings.NewReader(tc.text)); err != nil {
			t.Errorf("%q: %v", tc.text, err)
			continue
		}
		if got, ok := p.Lookup(tc.key); !ok || got != tc.want {
			t.Errorf("%q: %q=%q (set %v), want %q", tc.text, tc.key, got, ok, tc.want)
		}
	}
}

// TestMalformedUnicodeEscape: where Java throws "Malformed \uxxxx
// encoding.", Load fails naming the line.
func TestMalformedUnicodeEscape(t *testing.T) {
	for _, tc := range []struct {
		text string
		line string
	}{
		{"a=1\nk=a\\uZZZZ\n", "line 2"},
		{"# c\n\nk=\\u12\n", "line 3"},
		{"k=\\u004", "line 1"},
		{"k=tail\\u", "line 1"},
		{"a=1\nk=x\\\n  \\u00G0\n", "line 2"}, // continuation: the logical line's first
		{"\\uXYZW=1", "line 1"},               // in a key
	} {
		err := New().Load(strings.NewReader(tc.text))
		if err == nil {
			t.Errorf("%q accepted", tc.text)
			continue
		}
		for _, w := range []string{tc.line, `\u`, "four hex digits"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: error %q lacks %q", tc.text, err, w)
			}
		}
	}
}

func TestLoadRefusesNUL(t *testing.T) {
	err := New().Load(strings.NewReader("a=1\nb=\x00\n"))
	if err == nil || !strings.Contains(err.Error(), "line 2") || !strings.Contains(err.Error(), "binary") {
		t.Fatalf("got %v", err)
	}
}

func TestReadFileBounds(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "ok.properties")
	if err := os.WriteFile(ok, []byte("recordcount=10\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(ok); err != nil || string(b) != "recordcount=10\n" {
		t.Fatalf("%q %v", b, err)
	}
	big := filepath.Join(dir, "big.properties")
	if err := os.WriteFile(big, []byte(strings.Repeat("k=vvvvvvv\n", MaxFileBytes/10+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(big); err == nil || !strings.Contains(err.Error(), "4 MiB") {
		t.Fatalf("big file: %v", err)
	}
	bin := filepath.Join(dir, "bin")
	if err := os.WriteFile(bin, []byte("a=1\nb=2\n\x7fELF\x00\x01"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(bin); err == nil || !strings.Contains(err.Error(), "NUL byte on line 3") {
		t.Fatalf("binary: %v", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Fatalf("missing file: %v", err)
	}
	start := time.Now()
	if _, err := ReadFile("/dev/zero"); err == nil || !strings.Contains(err.Error(), "binary") {
		t.Fatalf("/dev/zero: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("/dev/zero took %s", d)
	}
}
