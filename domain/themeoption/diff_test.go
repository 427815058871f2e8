package themeoption

import (
	"testing"

	"github.com/wpsidecar/wpsidecar"
)

// TestDiff: changed and added ids in the new order, then removed ones,
// each value as PHP serializes it; a row that is not a set has no ids.
func TestDiff(t *testing.T) {
	before := `a:3:{s:1:"a";i:1;s:1:"b";i:2;s:1:"c";i:3;}`
	after := `a:3:{s:1:"d";i:4;s:1:"b";i:5;s:1:"a";i:1;}`
	str := func(s string) *string { return &s }
	want := []wpsidecar.Item{{Key: "d", After: str("i:4;")}, {Key: "b", Before: str("i:2;"), After: str("i:5;")}, {Key: "c", Before: str("i:3;")}}
	got := Diff(before, after)
	if len(got) != len(want) {
		t.Fatalf("%d items, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Key != want[i].Key || !same(got[i].Before, want[i].Before) || !same(got[i].After, want[i].After) {
			t.Errorf("item %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if d := Diff("not serialized", `s:1:"x";`); len(d) != 0 {
		t.Errorf("no sets, yet %d items", len(d))
	}
}

func same(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
