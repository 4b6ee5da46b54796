package properties

import (
	"reflect"
	"testing"
)

func TestTrackReadsSeesEveryAccessor(t *testing.T) {
	p := FromMap(map[string]string{"a": "1", "b": "true", "c": "x"})
	_ = p.String("c", "")
	p.TrackReads()
	_ = p.String("s", "")
	_, _ = p.Int64("a", 0)
	_, _ = p.PositiveInt64("pi", 1)
	_, _ = p.Bool("b", false)
	_, _ = p.Float64("f", 0)
	_, _ = p.OneOf("o", "x", "x")
	_, _ = p.Lookup("l")
	_ = p.Has("h")
	want := []string{"a", "b", "f", "h", "l", "o", "pi", "s"}
	if got := p.ReadKeys(); !reflect.DeepEqual(got, want) {
		t.Fatalf("read keys %v, want %v (c was read before tracking)", got, want)
	}
	if q := p.Clone(); len(q.ReadKeys()) != 0 {
		t.Fatal("a clone does not inherit tracking")
	}
}

func TestFindKnown(t *testing.T) {
	list := []Known{{Name: "x.y", Default: "1"}, {Name: "opt.", Prefix: true}}
	if k, ok := FindKnown(list, "x.y"); !ok || k.Default != "1" {
		t.Fatal("exact name")
	}
	if _, ok := FindKnown(list, "x.yz"); ok {
		t.Fatal("exact names do not match longer keys")
	}
	if _, ok := FindKnown(list, "opt.anything"); !ok {
		t.Fatal("prefix family")
	}
}
