package properties_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/internal/properties"
)

func load(t *testing.T, text string) *properties.Properties {
	t.Helper()
	p := properties.New()
	require.NoError(t, p.Load(strings.NewReader(text)))
	return p
}

func TestLoadJavaProperties(t *testing.T) {
	tests := []struct {
		name string
		text string
		want map[string]string
	}{
		{"equals", "a=1\nb = 2\n", map[string]string{"a": "1", "b": "2"}},
		{"colon", "a:1\nb : 2\n", map[string]string{"a": "1", "b": "2"}},
		{"whitespace separator", "a 1\nb\t2\nc\f3\n", map[string]string{"a": "1", "b": "2", "c": "3"}},
		{"whitespace then equals", "key   =   value", map[string]string{"key": "value"}},
		{"whitespace then colon", "key \t: value", map[string]string{"key": "value"}},
		{"only first separator counts", "a=b=c\nd:e:f\ng h=i", map[string]string{"a": "b=c", "d": "e:f", "g": "h=i"}},
		{"hash comment", "# comment\na=1\n  # indented comment\n", map[string]string{"a": "1"}},
		{"bang comment", "! comment\na=1\n\t! also\n", map[string]string{"a": "1"}},
		{"comment ending in backslash does not continue", "# c \\\na=1", map[string]string{"a": "1"}},
		{"hash inside value is kept", "a=1 # not a comment", map[string]string{"a": "1 # not a comment"}},
		{"blank lines", "\n\n   \na=1\n\t\n", map[string]string{"a": "1"}},
		{"leading whitespace of key", "   a=1", map[string]string{"a": "1"}},
		{"empty value", "a=\nb\nc:", map[string]string{"a": "", "b": "", "c": ""}},
		{"continuation", "a=one, \\\n    two, \\\n    three\nb=2", map[string]string{"a": "one, two, three", "b": "2"}},
		{"continuation line starting with hash is not a comment", "a=x\\\n#y\n", map[string]string{"a": "x#y"}},
		{"even backslashes do not continue", "a=x\\\\\nb=2", map[string]string{"a": "x\\", "b": "2"}},
		{"continuation at end of input", "a=x\\", map[string]string{"a": "x"}},
		{"empty continuation line ends the value", "a=x\\\n\nb=2", map[string]string{"a": "x", "b": "2"}},
		{"escapes in value", `a=tab\there\nnl\rcr\fff`, map[string]string{"a": "tab\there\nnl\rcr\fff"}},
		{"unicode escape", `a=caf\u00e9 \u0041`, map[string]string{"a": "café A"}},
		{"escaped separators in key", `my\ key\:x\=y = v`, map[string]string{"my key:x=y": "v"}},
		{"escaped ordinary char", `a=\q\\`, map[string]string{"a": "q\\"}},
		{"later key wins", "a=1\na=2", map[string]string{"a": "2"}},
		{"crlf line endings", "a=1\r\nb=2\r\n", map[string]string{"a": "1", "b": "2"}},
		{"ycsb workload", "recordcount=1000\nworkload=site.ycsb.workloads.CoreWorkload\nreadproportion=0.5\n",
			map[string]string{"recordcount": "1000", "workload": "site.ycsb.workloads.CoreWorkload", "readproportion": "0.5"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := load(t, tc.text)
			assert.Equal(t, tc.want, p.Map())
		})
	}
}

func TestLoadAppliesInOrder(t *testing.T) {
	p := load(t, "a=1\nb=1")
	require.NoError(t, p.Load(strings.NewReader("b=2\nc=2")))
	assert.Equal(t, map[string]string{"a": "1", "b": "2", "c": "2"}, p.Map())
}

func TestStringTrimsAndDefaults(t *testing.T) {
	p := properties.FromMap(map[string]string{"a": "  x  "})
	assert.Equal(t, "x", p.String("a", "d"))
	assert.Equal(t, "d", p.String("missing", "d"))
	assert.True(t, p.Has("a"))
	assert.False(t, p.Has("missing"))
}

func TestMergeCloneKeys(t *testing.T) {
	p := properties.FromMap(map[string]string{"b": "1", "a": "1"})
	c := p.Clone()
	c.Set("a", "2")
	assert.Equal(t, "1", p.String("a", ""), "Clone must be independent")
	o := properties.FromMap(map[string]string{"a": "3", "z": "3"})
	p.Merge(o)
	assert.Equal(t, []string{"a", "b", "z"}, p.Keys())
	assert.Equal(t, "3", p.String("a", ""))
	p.Delete("z")
	assert.False(t, p.Has("z"))
}

// propError asserts err is a *properties.Error naming the property.
func propError(t *testing.T, err error, prop string) {
	t.Helper()
	require.Error(t, err)
	var pe *properties.Error
	require.True(t, errors.As(err, &pe), "want *properties.Error, got %T: %v", err, err)
	assert.Equal(t, prop, pe.Property)
	assert.Contains(t, err.Error(), `"`+prop+`"`)
	assert.Contains(t, err.Error(), "expected")
}

func TestTypedGetters(t *testing.T) {
	p := properties.FromMap(map[string]string{
		"int": " 42 ", "neg": "-3", "zero": "0", "word": "abc", "float": "1.5", "big": "9223372036854775807",
		"nan": "NaN", "inf": "Inf", "prop": "0.25", "prop2": "1.5", "t": "TRUE", "f": "false", "empty": "",
		"yes": "yes", "dist": "zipfian", "Dist": "Zipfian", "huge": "9223372036854775808",
	})
	type call func() (any, error)
	tests := []struct {
		name    string
		call    call
		want    any
		errProp string
	}{
		{"Int64 ok", func() (any, error) { return p.Int64("int", 0) }, int64(42), ""},
		{"Int64 default", func() (any, error) { return p.Int64("missing", 7) }, int64(7), ""},
		{"Int64 max", func() (any, error) { return p.Int64("big", 0) }, int64(1<<63 - 1), ""},
		{"Int64 overflow", func() (any, error) { return p.Int64("huge", 0) }, nil, "huge"},
		{"Int64 not a number", func() (any, error) { return p.Int64("word", 0) }, nil, "word"},
		{"Int64 float", func() (any, error) { return p.Int64("float", 0) }, nil, "float"},
		{"NonNegInt64 zero", func() (any, error) { return p.NonNegInt64("zero", 1) }, int64(0), ""},
		{"NonNegInt64 negative", func() (any, error) { return p.NonNegInt64("neg", 0) }, nil, "neg"},
		{"NonNegInt64 word", func() (any, error) { return p.NonNegInt64("word", 0) }, nil, "word"},
		{"PositiveInt64 ok", func() (any, error) { return p.PositiveInt64("int", 1) }, int64(42), ""},
		{"PositiveInt64 zero", func() (any, error) { return p.PositiveInt64("zero", 1) }, nil, "zero"},
		{"PositiveInt64 negative", func() (any, error) { return p.PositiveInt64("neg", 1) }, nil, "neg"},
		{"Float64 ok", func() (any, error) { return p.Float64("float", 0) }, 1.5, ""},
		{"Float64 int", func() (any, error) { return p.Float64("int", 0) }, 42.0, ""},
		{"Float64 default", func() (any, error) { return p.Float64("missing", 2.5) }, 2.5, ""},
		{"Float64 NaN", func() (any, error) { return p.Float64("nan", 0) }, nil, "nan"},
		{"Float64 Inf", func() (any, error) { return p.Float64("inf", 0) }, nil, "inf"},
		{"Float64 word", func() (any, error) { return p.Float64("word", 0) }, nil, "word"},
		{"Proportion ok", func() (any, error) { return p.Proportion("prop", 0) }, 0.25, ""},
		{"Proportion above 1", func() (any, error) { return p.Proportion("prop2", 0) }, nil, "prop2"},
		{"Proportion negative", func() (any, error) { return p.Proportion("neg", 0) }, nil, "neg"},
		{"Bool TRUE", func() (any, error) { return p.Bool("t", false) }, true, ""},
		{"Bool false", func() (any, error) { return p.Bool("f", true) }, false, ""},
		{"Bool empty", func() (any, error) { return p.Bool("empty", true) }, false, ""},
		{"Bool default", func() (any, error) { return p.Bool("missing", true) }, true, ""},
		{"Bool yes", func() (any, error) { return p.Bool("yes", false) }, nil, "yes"},
		{"OneOf ok", func() (any, error) { return p.OneOf("dist", "uniform", "uniform", "zipfian") }, "zipfian", ""},
		{"OneOf default", func() (any, error) { return p.OneOf("missing", "uniform", "uniform", "zipfian") }, "uniform", ""},
		{"OneOf case sensitive", func() (any, error) { return p.OneOf("Dist", "uniform", "uniform", "zipfian") }, nil, "Dist"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.call()
			if tc.errProp != "" {
				propError(t, err, tc.errProp)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestErrorMessages(t *testing.T) {
	p := properties.FromMap(map[string]string{"recordcount": "abc", "x": "-1"})
	_, err := p.Int64("recordcount", 0)
	assert.EqualError(t, err, `property "recordcount"="abc": expected an integer`)
	_, err = p.NonNegInt64("x", 0)
	assert.EqualError(t, err, `property "x"="-1": expected a non-negative integer`)
	_, err = p.OneOf("recordcount", "a", "a", "b")
	assert.EqualError(t, err, `property "recordcount"="abc": expected one of a, b`)
	e := &properties.Error{Property: "p", Expected: "something"}
	assert.EqualError(t, e, `property "p": expected something`)
	// A property a flag set is quoted as the flag typed.
	e = &properties.Error{Property: "target", Value: "0.002", Expected: "more", Flag: "-target 0.002"}
	assert.EqualError(t, e, `flag -target 0.002 (the target property): expected more`)
}

func TestParseOverride(t *testing.T) {
	tests := []struct {
		arg       string
		key, val  string
		wantError bool
	}{
		{"a=1", "a", "1", false},
		{"a=", "a", "", false},
		{"a=b=c", "a", "b=c", false},
		{" a =1 ", "a", "1 ", false},
		{"exporter=site.ycsb.measurements.exporter.JSONArrayMeasurementsExporter", "exporter", "site.ycsb.measurements.exporter.JSONArrayMeasurementsExporter", false},
		{"recordcount", "", "", true},
		{"=1", "", "", true},
		{"", "", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.arg, func(t *testing.T) {
			k, v, err := properties.ParseOverride(tc.arg)
			if tc.wantError {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "-p")
				assert.Contains(t, err.Error(), "key=value")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.key, k)
			assert.Equal(t, tc.val, v)
		})
	}
}

func TestSetPairs(t *testing.T) {
	p := properties.New()
	p.SetPairs("a", "1", "b", "2", "dangling")
	if p.String("a", "") != "1" || p.String("b", "") != "2" || p.Has("dangling") {
		t.Fatalf("SetPairs: %v", p.Map())
	}
}
