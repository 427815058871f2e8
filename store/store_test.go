package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/internal/harness/testwait"
	"github.com/wpsidecar/wpsidecar/store"
)

func TestOption(t *testing.T) {
	tdb := testdb.New(t)
	db := tdb.Store(t)
	tdb.SetOption(t, "siteurl", "http://example.test/wp/")
	tdb.SetOption(t, "home", "")
	tdb.SetOption(t, "tag_base", "/tags/")
	tdb.SetOption(t, "blogdescription", "ends with a slash/")
	tdb.SetOption(t, "unicode", "Grüße 🎉")

	tests := []struct {
		name    string
		want    string
		wantErr error
	}{
		{"siteurl", "http://example.test/wp", nil},
		{"home", "http://example.test/wp", nil}, // empty home falls back to siteurl
		{"tag_base", "/tags", nil},
		{"blogdescription", "ends with a slash/", nil},
		{"  unicode  ", "Grüße 🎉", nil},
		{"UNICODE", "Grüße 🎉", nil}, // option_name is case-insensitive, as in WordPress
		{"missing_option", "", wpsidecar.ErrNotFound},
		{"   ", "", wpsidecar.ErrNotFound},
	}
	for _, tt := range tests {
		got, err := db.Option(context.Background(), tt.name)
		if !errors.Is(err, tt.wantErr) || got != tt.want {
			t.Errorf("Option(%q) = %q, %v; want %q, %v", tt.name, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestOptions_OneQueryManyNames(t *testing.T) {
	tdb := testdb.New(t)
	db := tdb.Store(t)
	got, err := db.Options(context.Background(), "siteurl", "permalink_structure", "nope")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"siteurl": "http://example.test", "permalink_structure": "/%postname%/"}
	if len(got) != len(want) || got["siteurl"] != want["siteurl"] || got["permalink_structure"] != want["permalink_structure"] {
		t.Errorf("Options = %v, want %v", got, want)
	}
}

func TestSettingsWatcher_SeesChangesAfterRefresh(t *testing.T) {
	tdb := testdb.New(t)
	db := tdb.Store(t)
	w := store.NewSettingsWatcher(db, time.Hour, store.SiteURLs{})
	// Never read: the first request reads the settings itself.
	if s, err := w.Current(); err != nil || s.Home != "http://example.test" {
		t.Fatalf("before the first refresh: %+v, %v", s, err)
	}
	ctx := context.Background()
	if err := w.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	s, err := w.Current()
	if err != nil || s.PlainPermalinks() || s.TimezoneString != "Europe/Berlin" || s.Home != "http://example.test" {
		t.Fatalf("Current = %+v, %v", s, err)
	}
	tdb.SetOption(t, "permalink_structure", "")
	if s, _ := w.Current(); s.PlainPermalinks() {
		t.Fatal("snapshot changed before a refresh")
	}
	if err := w.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if s, _ := w.Current(); !s.PlainPermalinks() {
		t.Fatal("plain permalinks not seen after refresh")
	}
}

func TestSettingsWatcher_Overrides(t *testing.T) {
	tdb := testdb.New(t)
	w := store.NewSettingsWatcher(tdb.Store(t), time.Hour, store.SiteURLs{Home: "https://front.example/", SiteURL: "https://cms.example/wp/"})
	if err := w.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	s, _ := w.Current()
	if s.Home != "https://front.example" || s.SiteURL != "https://cms.example/wp" {
		t.Errorf("home, siteurl = %q, %q", s.Home, s.SiteURL)
	}
}

func TestSettingsWatcher_NotInstalled(t *testing.T) {
	tdb := testdb.New(t)
	tdb.DeleteOption(t, "siteurl")
	w := store.NewSettingsWatcher(tdb.Store(t), time.Hour, store.SiteURLs{})
	err := w.Refresh(context.Background())
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Refresh = %v, want ErrUnavailable", err)
	}
}

func TestUnreachableDatabase_IsUnavailable(t *testing.T) {
	db, err := store.Open(store.Options{Net: "tcp", Addr: "127.0.0.1:1", User: "root", DBName: "x",
		TablePrefix: "wp_", Timeout: time.Second, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Ping(context.Background()); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("Ping = %v, want ErrUnavailable", err)
	}
	if _, err := db.Option(context.Background(), "siteurl"); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("Option = %v, want ErrUnavailable", err)
	}
}

func TestAccessDenied_IsUnavailable(t *testing.T) {
	tdb := testdb.New(t)
	o := tdb.StoreOptions()
	o.User, o.Password = "no_such_user_x", "wrong"
	db, err := store.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Ping(context.Background()); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("Ping = %v, want ErrUnavailable", err)
	}
}

func TestOpen_RejectsBadPrefix(t *testing.T) {
	if _, err := store.Open(store.Options{TablePrefix: "wp_; DROP"}); err == nil {
		t.Error("Open accepted a table prefix with SQL in it")
	}
}

func TestSettings_MultisiteNetworkOptions(t *testing.T) {
	tdb := testdb.New(t)
	tdb.AddSitemeta(t)
	tdb.SetOption(t, "logged_in_key", "single-site value, not used on a network")
	for _, kv := range [][3]any{
		{1, "siteurl", "http://localhost/"}, {1, "site_admins", `a:1:{i:0;s:5:"admin";}`},
		{1, "using_application_passwords", "1"}, {1, "logged_in_key", "network key"},
		{1, "logged_in_key", "a later duplicate row"}, {2, "siteurl", "http://other-network/"},
	} {
		if _, err := tdb.SQL.Exec("INSERT INTO wp_sitemeta (site_id, meta_key, meta_value) VALUES (?, ?, ?)", kv[0], kv[1], kv[2]); err != nil {
			t.Fatal(err)
		}
	}
	o := tdb.StoreOptions()
	o.Multisite = true
	db, err := store.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := db.ReadSiteSettings(context.Background(), store.SiteURLs{})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Multisite || s.NetworkSiteURL != "http://localhost/" || !s.HasSiteAdmins || s.SiteAdmins != `a:1:{i:0;s:5:"admin";}` ||
		!s.UsingAppPasswords || s.SaltOptions["logged_in_key"] != "network key" || s.SiteURL != "http://example.test" {
		t.Errorf("%+v", s)
	}
}

func TestLocalTime(t *testing.T) {
	now := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		tz, offset, want string
	}{
		{"Europe/Berlin", "", "2026-07-01 14:00:00"},
		{"", "-5.5", "2026-07-01 06:30:00"},
		{"", "", "2026-07-01 12:00:00"},
		{"Not/AZone", "2", "2026-07-01 14:00:00"},
	}
	for _, tt := range tests {
		if got := (store.SiteSettings{TimezoneString: tt.tz, GMTOffset: tt.offset}).LocalTime(now); got != tt.want {
			t.Errorf("LocalTime(%q, %q) = %s, want %s", tt.tz, tt.offset, got, tt.want)
		}
	}
}

// TestSettingsWatcher_RequestsTryTheDatabase: while the database is marked
// down, a request's Current reads the settings itself (no Run here to do
// it), so the routes recover the moment the database does; a failed try
// leaves the database marked down.
func TestSettingsWatcher_RequestsTryTheDatabase(t *testing.T) {
	srv := testdb.StartServer(t)
	tdb := testdb.NewOn(t, srv.Config())
	o := tdb.StoreOptions()
	o.Timeout = 500 * time.Millisecond
	db, err := store.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	w := store.NewSettingsWatcher(db, time.Hour, store.SiteURLs{})
	srv.Stop()
	if err := w.Refresh(context.Background()); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Refresh with the server stopped = %v", err)
	}
	if _, err := w.Current(); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Current with the server stopped = %v", err)
	}
	srv.Start()
	// Requests' tries are spaced: the first calls may be turned away
	// without one, until a request's own try reads the settings (no Run
	// here to do it).
	var s store.SiteSettings
	testwait.For(t, "the settings once the server is back", func() bool { s, err = w.Current(); return err == nil })
	if s.SiteURL == "" {
		t.Fatalf("Current once the server is back = %+v, %v", s, err)
	}
	if _, err := w.Current(); err != nil {
		t.Fatalf("Current after the try = %v", err)
	}
}
