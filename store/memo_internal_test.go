package store

import "testing"

// TestMemo_ReadRacingAForget: a read that began before a Forget is not
// kept (it may have read the row before the change committed), one that
// began after is; entries of a kind stay within the limit.
func TestMemo_ReadRacingAForget(t *testing.T) {
	m := NewMemo(func() bool { return true }, 2)
	k := memoKey{kindOption, "wp_options\x00o"}
	_, _, gen, _ := m.lookup(k)
	m.Forget(Changed{Options: []string{"other"}})
	m.put(k, gen, optionRow{"old", true})
	if _, ok, _, _ := m.lookup(k); ok {
		t.Fatal("a read older than a Forget was kept")
	}
	_, _, gen, _ = m.lookup(k)
	m.put(k, gen, optionRow{"new", true})
	if v, ok, _, _ := m.lookup(k); !ok || v.(optionRow).value != "new" {
		t.Fatalf("a read after the Forget: %v %v", v, ok)
	}
	for _, key := range []string{"a", "b", "c"} {
		_, _, gen, _ = m.lookup(memoKey{kindUser, key})
		m.put(memoKey{kindUser, key}, gen, &User{})
	}
	if n := len(m.kinds[kindUser]); n != 2 {
		t.Errorf("%d users kept, limit 2", n)
	}
	var none *Memo
	none.Forget(Changed{All: true})
	if _, ok, _, serving := none.lookup(k); ok || serving {
		t.Error("a nil memo answers")
	}
}
