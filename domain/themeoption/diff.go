package themeoption

import (
	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/internal/phpserial"
)

// optionIDs are a stored options set's ids, each with its value as PHP
// serializes it, and their order; a row that is not an array or object
// has none.
func optionIDs(raw string) (map[string]string, []string) {
	values, order := map[string]string{}, []string{}
	if v, err := phpserial.MaybeUnserialize(raw); err == nil && (v.Kind == phpserial.Array || v.Kind == phpserial.Object) {
		for _, e := range v.Entries {
			id := e.Key.String()
			values[id] = phpserial.Serialize(e.Value)
			order = append(order, id)
		}
	}
	return values, order
}

// Diff is what changed, id by id, between two stored options sets (the
// row's bytes, as PHP serialized them): changed or added ids in the new
// order, then removed ones; each value as PHP serializes it.
func Diff(before, after string) []wpsidecar.Item {
	ov, oo := optionIDs(before)
	nv, no := optionIDs(after)
	var out []wpsidecar.Item
	for _, id := range no {
		a := nv[id]
		if b, ok := ov[id]; !ok {
			out = append(out, wpsidecar.Item{Key: id, After: &a})
		} else if b != a {
			out = append(out, wpsidecar.Item{Key: id, Before: &b, After: &a})
		}
	}
	for _, id := range oo {
		if _, ok := nv[id]; !ok {
			b := ov[id]
			out = append(out, wpsidecar.Item{Key: id, Before: &b})
		}
	}
	return out
}
