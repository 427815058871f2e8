package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar/store/fieldgrouptable"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/domain/fieldgroup"
	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/internal/phpserial"
	"github.com/wpsidecar/wpsidecar/store"
)

func TestUserForAuth(t *testing.T) {
	tdb := testdb.New(t)
	db := tdb.Store(t)
	admin := tdb.AddUser(t, "admin", "admin@example.test", "$P$hash",
		[2]string{"wp_capabilities", `a:1:{s:13:"administrator";b:1;}`},
		[2]string{"session_tokens", "first"}, [2]string{"session_tokens", "second"},
		[2]string{"unrelated", "x"})
	other := tdb.AddUser(t, "other@example.test", "shared@example.test", "h2")
	mailer := tdb.AddUser(t, "mailer", "other@example.test", "h3")
	ctx := context.Background()
	keys := []string{db.CapabilitiesKey(), store.MetaSessionTokens, store.MetaApplicationPasswords}

	u, err := db.UserForAuth(ctx, " Admin ", false, nil, keys...)
	if err != nil || u.ID != admin || u.Login != "admin" || u.Pass != "$P$hash" || u.Matched != "login" {
		t.Fatalf("by login: %+v %v", u, err)
	}
	if u.Meta[store.MetaSessionTokens] != "first" || u.Meta["wp_capabilities"] == "" || len(u.Meta) != 2 {
		t.Errorf("meta %q: want the lowest umeta_id and only the keys asked for", u.Meta)
	}
	// A login that is also someone's e-mail: the login wins.
	if u, err := db.UserForAuth(ctx, "other@example.test", true, nil, keys...); err != nil || u.ID != other || u.Matched != "login" {
		t.Errorf("login before e-mail: %+v %v", u, err)
	}
	if u, err := db.UserForAuth(ctx, "shared@example.test", true, nil, keys...); err != nil || u.ID != other || u.Matched != "email" {
		t.Errorf("by e-mail: %+v %v", u, err)
	}
	if _, err := db.UserForAuth(ctx, "shared@example.test", false, nil, keys...); !errors.Is(err, wpsidecar.ErrNotFound) {
		t.Errorf("e-mail not allowed: %v", err)
	}
	if _, err := db.UserForAuth(ctx, "nobody", true, nil); !errors.Is(err, wpsidecar.ErrNotFound) {
		t.Errorf("unknown: %v", err)
	}
	_ = mailer
}

func appPasswords(items ...[3]any) string {
	v := phpserial.Value{Kind: phpserial.Array}
	for i, it := range items {
		item := phpserial.Value{Kind: phpserial.Array}
		add := func(k string, val phpserial.Value) {
			item.Entries = append(item.Entries, phpserial.Entry{Key: phpserial.StrKey(k), Value: val})
		}
		add("uuid", phpserial.Value{Kind: phpserial.String, Str: it[0].(string)})
		add("app_id", phpserial.Value{Kind: phpserial.String})
		add("name", phpserial.Value{Kind: phpserial.String, Str: "n"})
		add("password", phpserial.Value{Kind: phpserial.String, Str: it[1].(string)})
		add("created", phpserial.Value{Kind: phpserial.Int, Int: 1})
		if it[2] == nil {
			add("last_used", phpserial.Value{Kind: phpserial.Null})
		} else {
			add("last_used", phpserial.Value{Kind: phpserial.Int, Int: it[2].(int64)})
		}
		add("last_ip", phpserial.Value{Kind: phpserial.Null})
		v.Entries = append(v.Entries, phpserial.Entry{Key: phpserial.IntKey(int64(i)), Value: item})
	}
	return phpserial.Serialize(v)
}

func TestTouchApplicationPassword(t *testing.T) {
	tdb := testdb.New(t)
	db := tdb.Store(t)
	now := time.Unix(1_800_000_000, 0)
	id := tdb.AddUser(t, "app", "app@example.test", "x",
		[2]string{store.MetaApplicationPasswords, appPasswords([3]any{"u-1", "h1", nil}, [3]any{"u-2", "h2", now.Unix() - 3600})})
	ctx := context.Background()
	read := func() string {
		var s string
		tdb.SQL.QueryRow("SELECT meta_value FROM wp_usermeta WHERE user_id = ? AND meta_key = '_application_passwords'", id).Scan(&s)
		return s
	}
	if wrote, err := db.TouchApplicationPassword(ctx, id, "u-2", "10.0.0.1", now); err != nil || wrote {
		t.Errorf("used an hour ago: wrote=%v %v; WordPress writes at most once a day", wrote, err)
	}
	wrote, err := db.TouchApplicationPassword(ctx, id, "u-1", "10.0.0.1", now)
	if err != nil || !wrote {
		t.Fatalf("first use: wrote=%v %v", wrote, err)
	}
	want := appPasswords([3]any{"u-1", "h1", now.Unix()}, [3]any{"u-2", "h2", now.Unix() - 3600})
	want = replaceFirstNullIP(want, "10.0.0.1")
	if got := read(); got != want {
		t.Errorf("row:\n got %s\nwant %s", got, want)
	}
	if wrote, _ := db.TouchApplicationPassword(ctx, id, "gone", "x", now); wrote {
		t.Error("an unknown uuid wrote")
	}
}

// TestTouchApplicationPassword_Concurrent: many first uses at once of
// different items lose none of them.
func TestTouchApplicationPassword_Concurrent(t *testing.T) {
	tdb := testdb.New(t)
	db := tdb.Store(t)
	var items [][3]any
	for i := 0; i < 8; i++ {
		items = append(items, [3]any{string(rune('a' + i)), "h", nil})
	}
	id := tdb.AddUser(t, "busy", "busy@example.test", "x", [2]string{store.MetaApplicationPasswords, appPasswords(items...)})
	now := time.Unix(1_800_000_000, 0)
	var wg sync.WaitGroup
	for _, it := range items {
		wg.Add(1)
		go func(uuid string) {
			defer wg.Done()
			if _, err := db.TouchApplicationPassword(context.Background(), id, uuid, "127.0.0.1", now); err != nil {
				t.Error(err)
			}
		}(it[0].(string))
	}
	wg.Wait()
	var raw string
	tdb.SQL.QueryRow("SELECT meta_value FROM wp_usermeta WHERE user_id = ?", id).Scan(&raw)
	v, err := phpserial.Unserialize(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range v.Entries {
		if lu, _ := e.Value.Get("last_used"); lu.Int != now.Unix() {
			u, _ := e.Value.Get("uuid")
			t.Errorf("item %s lost its last_used", u.Str)
		}
	}
}

func replaceFirstNullIP(s, ip string) string {
	v, _ := phpserial.Unserialize(s)
	item := v.Entries[0].Value
	for i := range item.Entries {
		if item.Entries[i].Key.Str == "last_ip" {
			item.Entries[i].Value = phpserial.Value{Kind: phpserial.String, Str: ip}
		}
	}
	v.Entries[0].Value = item
	return phpserial.Serialize(v)
}

// TestPiggyback: a read attached to the request rides in the user lookup's
// round trip and is filled in; a failing ride-along leaves the lookup whole.
func TestPiggyback(t *testing.T) {
	tdb := testdb.New(t)
	db := tdb.Store(t)
	tdb.AddUser(t, "rider", "rider@example.test", "h")
	groups, err := fieldgrouptable.Open(db, "wp_fieldmgr_groups")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var list fieldgrouptable.GroupList
	pb := groups.ListPiggyback(&list)
	// The table does not exist yet: the lookup still works, the ride-along reports it.
	if u, err := db.UserForAuth(ctx, "rider", false, pb); err != nil || u.Login != "rider" {
		t.Fatalf("lookup with a failing ride-along: %+v %v", u, err)
	}
	if done, err := pb.Done(); !done || err == nil {
		t.Errorf("ride-along on a missing table: done=%v err=%v", done, err)
	}
	if _, err := groups.EnsureTable(ctx); err != nil {
		t.Fatal(err)
	}
	if err := groups.Create(ctx, "g1", "T", "{}", "2026-01-01 00:00:00", wpsidecar.Author{}); err != nil {
		t.Fatal(err)
	}
	pb = groups.ListPiggyback(&list)
	if _, err := db.UserForAuth(ctx, "rider", false, pb); err != nil {
		t.Fatal(err)
	}
	if done, err := pb.Done(); !done || err != nil || len(list.Groups) != 1 || list.Groups[0].Key != "g1" || list.Version == 0 {
		t.Errorf("ride-along: done=%v err=%v list=%+v", done, err, list)
	}
	var g fieldgroup.Group
	found := false
	pb = groups.GetPiggyback("g1", &g, &found)
	if _, err := db.UserForAuth(ctx, "nobody", false, pb); !errors.Is(err, wpsidecar.ErrNotFound) {
		t.Fatal(err)
	}
	if done, err := pb.Done(); !done || err != nil || !found || g.Title != "T" {
		t.Errorf("ride-along of an unknown user's lookup: %v %v %v %+v", done, err, found, g)
	}
}
