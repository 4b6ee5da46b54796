package plural

import "testing"

func TestCount(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{Count(0, "agent"), "0 agents"},
		{Count(1, "agent"), "1 agent"},
		{Count(int64(3), "interval"), "3 intervals"},
		{CountAs(1, "copy", "copies"), "1 copy"},
		{CountAs(2, "copy", "copies"), "2 copies"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
