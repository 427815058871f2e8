package fieldgroup

import "testing"

// TestDiff: what the history keeps of a group is its title, status and
// config; a change of the dates alone is none, a group that appears or
// goes has no before or no after.
func TestDiff(t *testing.T) {
	g := Group{Key: "k", Title: "T", Config: `{"type":"post"}`, Status: StatusActive, CreatedAt: "2024-01-01 00:00:00", UpdatedAt: "2024-01-01 00:00:00"}
	later := g
	later.UpdatedAt = "2024-02-01 00:00:00"
	if _, changed := Diff("k", g, true, later, true); changed {
		t.Error("the dates alone changed, yet a change")
	}
	off := g
	off.Status = StatusInactive
	c, changed := Diff("k", g, true, off, true)
	if !changed || c.Key != "k" || *c.Before != `{"title":"T","status":"active","config":"{\"type\":\"post\"}"}` {
		t.Fatalf("%v %+v", changed, c)
	}
	if v, err := ParseValue(*c.After); err != nil || v != off.Value() {
		t.Errorf("after reads back as %+v, %v", v, err)
	}
	if c, changed := Diff("k", Group{}, false, g, true); !changed || c.Before != nil || c.After == nil {
		t.Errorf("created: %+v", c)
	}
	if c, changed := Diff("k", g, true, Group{}, false); !changed || c.Before == nil || c.After != nil {
		t.Errorf("deleted: %+v", c)
	}
}
