package store

import (
	"context"
	"testing"
)

// TestMemo_ReadRacingAForget: a read that began before a Forget is not
// kept (it may have read the row before the change committed), one that
// began after is; entries of a kind stay within the limit.
func TestMemo_ReadRacingAForget(t *testing.T) {
	m := NewMemo(func(context.Context) bool { return true }, 2)
	k := memoKey{kindOption, "wp_options\x00o"}
	_, _, gen, _ := m.lookup(context.Background(), k)
	m.Forget(Changed{Options: []string{"other"}})
	m.put(k, gen, optionRow{"old", true})
	if _, ok, _, _ := m.lookup(context.Background(), k); ok {
		t.Fatal("a read older than a Forget was kept")
	}
	_, _, gen, _ = m.lookup(context.Background(), k)
	m.put(k, gen, optionRow{"new", true})
	if v, ok, _, _ := m.lookup(context.Background(), k); !ok || v.(optionRow).value != "new" {
		t.Fatalf("a read after the Forget: %v %v", v, ok)
	}
	for _, key := range []string{"a", "b", "c"} {
		_, _, gen, _ = m.lookup(context.Background(), memoKey{kindUser, key})
		m.put(memoKey{kindUser, key}, gen, &User{})
	}
	if n := len(m.kinds[kindUser]); n != 2 {
		t.Errorf("%d users kept, limit 2", n)
	}
	var none *Memo
	none.Forget(Changed{All: true})
	if _, ok, _, serving := none.lookup(context.Background(), k); ok || serving {
		t.Error("a nil memo answers")
	}
}

// TestMemo_ForgetsTables: a table written forgets the reads of that table
// alone, whichever namespace's it is; a read that found no row is not
// kept.
func TestMemo_ForgetsTables(t *testing.T) {
	m := NewMemo(func(context.Context) bool { return true }, 10)
	keys := []memoKey{
		{kindTable, "list\x00wp_fieldmgr_groups"},
		{kindTable, "group\x00wp_fieldmgr_groups\x00g1"},
		{kindTable, "group\x00wp_2_fieldmgr_groups\x00g1"},
		{kindTable, "menu\x00wp_menus\x00main"},
	}
	for _, k := range keys {
		_, _, gen, _ := m.lookup(context.Background(), k)
		m.put(k, gen, k.key)
	}
	_, _, gen, _ := m.lookup(context.Background(), memoKey{kindTable, "group\x00wp_fieldmgr_groups\x00none"})
	m.put(memoKey{kindTable, "group\x00wp_fieldmgr_groups\x00none"}, gen, notFound{})
	m.Forget(Changed{Tables: []string{"wp_fieldmgr_groups"}})
	var kept []string
	for k := range m.kinds[kindTable] {
		kept = append(kept, k)
	}
	if len(kept) != 2 || m.kinds[kindTable][keys[2].key] == nil || m.kinds[kindTable][keys[3].key] == nil {
		t.Errorf("kept %q, want site 2's group and the menu", kept)
	}
	// The log may name a table in another letter case than the
	// configuration (lower_case_table_names).
	m.Forget(Changed{Tables: []string{"WP_Menus"}})
	if _, ok := m.kinds[kindTable][keys[3].key]; ok {
		t.Error("the menu's read outlived its table's write")
	}
}

// notFound is a table read that found no row (as fieldgrouptable's).
type notFound struct{}

func (notFound) Missing() bool { return true }
