package generator

import (
	"encoding/binary"
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
