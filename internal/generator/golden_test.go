package generator

import (
	"encoding/binary"
	"encoding/hex"
	"hash/fnv"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// Golden vectors from the compatibility notes (verified against Java YCSB).

func TestGoldenKeys(t *testing.T) {
	cases := map[int64]string{
		0:      "user6284781860667377211",
		1:      "user8517097267634966620",
		2:      "user1820151046732198393",
		3:      "user4052466453699787802",
		99999:  "user7592201923306675823",
		100000: "user2382277743992889674",
	}
	for k, want := range cases {
		require.Equal(t, want, string(AppendKey(nil, "user", k, 1, true)), "key %d", k)
	}
}

func TestGoldenZipfianConstants(t *testing.T) {
	requireRelClose(t, 12.778338062551246, Zeta(100000, 0.99), "zeta(100000)")
	requireRelClose(t, 1.5034777750283594, Zeta(2, 0.99), "zeta(2)")
	z := NewZipfian(0, 99999, ZipfianConstant)
	requireRelClose(t, 12.778338062551246, z.Zetan(), "zipfian zetan")
	requireRelClose(t, 0.11622472739519558, z.Eta(), "eta(100000)")
	requireRelClose(t, 0.21220003380967406, NewScrambledZipfian(0, 99).Eta(), "scrambled eta")
}

func TestGoldenDeterministicValue(t *testing.T) {
	want := "user6284781860667377211:field0:-56807877:2032869390:-165488160:1762371712:-169193395:-1039977118:-10"
	got := AppendDeterministicValue(nil, []byte("user6284781860667377211"), "field0", 100)
	require.Equal(t, want, string(got))
}

// FNVHash64 must agree with an independent FNV-1a (hash/fnv) over the
// little-endian bytes followed by Java Math.abs.
func TestFNVHash64MatchesStdlib(t *testing.T) {
	r := NewRand(1)
	vals := []int64{0, 1, -1, math.MaxInt64, math.MinInt64, 99999}
	for i := 0; i < 1000; i++ {
		vals = append(vals, int64(r.Uint64()))
	}
	for _, v := range vals {
		h := fnv.New64a()
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(v))
		_, _ = h.Write(b[:])
		want := int64(h.Sum64())
		if want < 0 {
			want = -want
		}
		require.Equal(t, want, FNVHash64(v), "v=%d", v)
	}
	require.Equal(t, int64(6284781860667377211), FNVHash64(0))
}

// Beyond ASCII the value is Java's String: the hash over its UTF-16
// units, its length counted in them (so more bytes than fieldlength in
// UTF-8), a cut through a surrogate pair leaving "?" (a lone high
// surrogate in UTF-8, as Java encodes it). The expected bytes are Java's
// (JDK 17, YCSB's buildDeterministicValue), in UTF-8.
func TestGoldenDeterministicValueBeyondASCII(t *testing.T) {
	for _, tc := range []struct {
		key, field string
		size       int
		want       string
	}{
		{"user1", "caf\u00e90", 100, "75736572313a636166c3a9303a313532383532343833313a2d3336313830343831343a2d313033373235393730343a3835323633323134313a313830333439373931333a2d3532323535393533383a313631353737383735353a2d3231373331313038393a"},
		{"caf\u00e9123", "field0", 100, "636166c3a93132333a6669656c64303a313933323935313136333a2d313932393130393630313a2d3233303636393038383a323133383331333234393a2d323035343033313931373a2d35323738373536363a2d323132313432313539373a313030353030"},
		{"user1", "caf\u00e90", 8, "75736572313a6361"},
		{"k\U0001F600x", "f", 2, "6b3f"},
		{"k\U0001F600x", "f", 50, "6bf09f9880783a663a313430343136343833363a2d3931393937313936353a313131333936323237303a3436323331353734383a"},
	} {
		got := AppendDeterministicValue([]byte("pre"), []byte(tc.key), tc.field, tc.size)
		require.Equal(t, "pre", string(got[:3]))
		require.Equal(t, tc.want, hex.EncodeToString(got[3:]), "%q %q %d", tc.key, tc.field, tc.size)
	}
}
