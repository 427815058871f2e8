package store_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar/store/fieldgrouptable"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/domain/fieldgroup"
	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/store"
)

// TestMemo: while it serves, reads come from memory — a row changed behind
// its back is not seen — until Forget names what changed; the sidecar's
// own writes forget by themselves; a memo that does not serve reads the
// database every time; misses of users and groups are not kept.
func TestMemo(t *testing.T) {
	tdb := testdb.New(t)
	db := tdb.Store(t)
	var serving atomic.Bool
	serving.Store(true)
	memo := store.NewMemo(func(context.Context) bool { return serving.Load() }, 100)
	db.UseMemo(memo)
	ctx := context.Background()
	groups, err := fieldgrouptable.Open(db, "wp_fieldmgr_groups")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := groups.EnsureTable(ctx); err != nil {
		t.Fatal(err)
	}
	if err := groups.Create(ctx, "g1", "T1", "{}", "2026-01-01 00:00:00", wpsidecar.Author{}); err != nil {
		t.Fatal(err)
	}
	id := tdb.AddUser(t, "kept", "kept@example.test", "h1", [2]string{"session_tokens", "s1"})
	tdb.SetOption(t, "opts", "v1")

	user := func() string {
		u, err := db.UserForAuth(ctx, "kept", false, nil, store.MetaSessionTokens)
		if err != nil {
			return err.Error()
		}
		return u.Pass + "/" + u.Meta[store.MetaSessionTokens]
	}
	option := func() string {
		v, err := db.RawOption(ctx, "opts")
		if err != nil {
			return err.Error()
		}
		return v
	}
	group := func() string {
		list, err := groups.List(ctx)
		if err != nil || len(list) == 0 {
			return "list: " + errString(err)
		}
		g, err := groups.Get(ctx, "g1")
		if err != nil {
			return "get: " + errString(err)
		}
		return list[0].Title + "/" + g.Title
	}
	behindItsBack := func(q string, args ...any) {
		t.Helper()
		if _, err := tdb.SQL.Exec(q, args...); err != nil {
			t.Fatal(err)
		}
	}
	// listVersion is the version of the list read now (fieldgrouptable.GroupList):
	// the same while the memo keeps the list, another once it is read again.
	listVersion := func() uint64 {
		l, err := groups.Listed(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return l.Version
	}
	check := func(step, got, want string) {
		t.Helper()
		if got != want {
			t.Errorf("%s: %q, want %q", step, got, want)
		}
	}

	check("user read", user(), "h1/s1")
	check("option read", option(), "v1")
	check("groups read", group(), "T1/T1")
	read := listVersion()
	behindItsBack("UPDATE wp_users SET user_pass = 'h2' WHERE ID = ?", id)
	behindItsBack("UPDATE wp_usermeta SET meta_value = 's2' WHERE user_id = ?", id)
	behindItsBack("UPDATE wp_options SET option_value = 'v2' WHERE option_name = 'opts'")
	behindItsBack("UPDATE wp_fieldmgr_groups SET title = 'T2'")
	check("user kept", user(), "h1/s1")
	if u, err := db.UserForAuth(ctx, "KEPT", false, nil, store.MetaSessionTokens); err != nil || u.Pass != "h1" {
		t.Errorf("the login in capitals (the same user to the collation) is not the kept entry: %+v %v", u, err)
	}
	check("option kept", option(), "v1")
	check("groups kept", group(), "T1/T1")
	if v := listVersion(); v != read {
		t.Errorf("the kept list's version moved: %d, read as %d", v, read)
	}

	memo.Forget(store.Changed{Options: []string{"unrelated"}})
	check("option kept after another's change", option(), "v1")
	memo.Forget(store.Changed{Options: []string{"OPTS "}}) // the collation's equal
	check("option forgotten", option(), "v2")
	check("user still kept", user(), "h1/s1")
	memo.Forget(store.Changed{Users: true})
	check("user forgotten", user(), "h2/s2")
	check("groups still kept", group(), "T1/T1")
	memo.Forget(store.Changed{Tables: []string{"wp_menus", "wp_2_fieldmgr_groups"}})
	check("groups kept after other tables' writes", group(), "T1/T1")
	memo.Forget(store.Changed{Tables: []string{"wp_fieldmgr_groups"}})
	check("groups forgotten", group(), "T2/T2")
	if v := listVersion(); v == read || v == 0 {
		t.Errorf("the list read again after it was forgotten kept its version %d", v)
	}

	// The sidecar's own writes forget what they wrote.
	if err := db.ModifyOption(ctx, "opts", wp61, nil, func(string, bool) (string, error) { return "v3", nil }); err != nil {
		t.Fatal(err)
	}
	check("own option write", option(), "v3")
	if _, err := groups.Toggle(ctx, "g1", "2026-01-02 00:00:00", nil, wpsidecar.Author{}); err != nil {
		t.Fatal(err)
	}
	if g, err := groups.Get(ctx, "g1"); err != nil || g.Status != fieldgroup.StatusInactive {
		t.Errorf("own group write: %+v %v", g, err)
	}

	// A DDL statement forgets everything.
	behindItsBack("UPDATE wp_options SET option_value = 'v4' WHERE option_name = 'opts'")
	behindItsBack("UPDATE wp_users SET user_pass = 'h3' WHERE ID = ?", id)
	memo.Forget(store.Changed{All: true})
	check("all forgotten: option", option(), "v4")
	check("all forgotten: user", user(), "h3/s2")

	// Nobody found is nobody kept: a user or group created later is seen.
	if _, err := db.UserForAuth(ctx, "later", false, nil); !errors.Is(err, wpsidecar.ErrNotFound) {
		t.Fatal(err)
	}
	if _, err := groups.Get(ctx, "g2"); !errors.Is(err, wpsidecar.ErrNotFound) {
		t.Fatal(err)
	}
	tdb.AddUser(t, "later", "later@example.test", "h")
	behindItsBack("INSERT INTO wp_fieldmgr_groups (group_key, title, config, created_at, updated_at) VALUES ('g2', 'T', '{}', NOW(), NOW())")
	if _, err := db.UserForAuth(ctx, "later", false, nil); err != nil {
		t.Errorf("user created after a miss: %v", err)
	}
	if _, err := groups.Get(ctx, "g2"); err != nil {
		t.Errorf("group created after a miss: %v", err)
	}

	// Not serving: every read goes to the database.
	serving.Store(false)
	behindItsBack("UPDATE wp_options SET option_value = 'v5' WHERE option_name = 'opts'")
	check("not serving", option(), "v5")
	if a, b := listVersion(), listVersion(); a == b {
		t.Errorf("two reads of the list while the memo does not serve: version %d both", a)
	}
	if s := memo.Stats(); s.Hits == 0 || s.Misses == 0 || s.Bypassed != 3 {
		t.Errorf("stats %+v", s)
	}
}

func errString(err error) string {
	if err == nil {
		return "none"
	}
	return err.Error()
}

// TestMemo_Version: the version moves with every Forget, with every read
// made while the memo did not serve (it may have gone to a replica behind
// the feed), and when a settings refresh finds other settings — not when
// it finds the same, which keeps the snapshot read before; it is not
// served while the memo is not.
func TestMemo_Version(t *testing.T) {
	tdb := testdb.New(t)
	db := tdb.Store(t)
	var serving atomic.Bool
	serving.Store(true)
	memo := store.NewMemo(func(context.Context) bool { return serving.Load() }, 100)
	db.UseMemo(memo)
	ctx := context.Background()
	w := store.NewSettingsWatcher(db, time.Hour, store.SiteURLs{})
	if err := w.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	first, _ := w.Current()
	v0, ok := memo.Version(context.Background())
	step := func(name string, do func(), moves bool) {
		t.Helper()
		do()
		v, ok := memo.Version(context.Background())
		if (v != v0) != moves || !ok {
			t.Errorf("%s: version %d → %d (serving %v), moved: want %v", name, v0, v, ok, moves)
		}
		v0 = v
	}
	if !ok {
		t.Fatal("a serving memo's version is not served")
	}
	step("the same settings read again", func() {
		if err := w.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		if s, _ := w.Current(); !s.ReadAt.Equal(first.ReadAt) {
			t.Error("an unchanged snapshot was replaced")
		}
	}, false)
	step("a setting changed", func() {
		tdb.SetOption(t, "blogname", "Changed")
		tdb.SetOption(t, "home", "https://changed.example")
		if err := w.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
	}, true)
	step("a Forget", func() { memo.Forget(store.Changed{Options: []string{"x"}}) }, true)
	step("a read while not serving", func() {
		serving.Store(false)
		if _, err := db.RawOption(ctx, "home"); err != nil {
			t.Fatal(err)
		}
		if _, ok := memo.Version(context.Background()); ok {
			t.Error("served while the memo does not")
		}
		serving.Store(true)
	}, true)
	step("a read while serving", func() {
		if _, err := db.RawOption(ctx, "home"); err != nil {
			t.Fatal(err)
		}
	}, false)
}
