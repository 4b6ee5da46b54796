package properties

import "testing"

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"recordcount":          "recordcount",
		"x\x1b[31mred":         `x\x1b[31mred`,
		"a\rb":                 `a\x0db`,
		"bad\xffbyte":          `bad\xffbyte`,
		"über":                 "über",
		"rtl\u202eoverride":    `rtl\u202eoverride`,
		"\u0085next line (C1)": `\x85next line (C1)`,
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}
