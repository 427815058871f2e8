package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/internal/phpserial"
	"github.com/wpsidecar/wpsidecar/store"
)

// db_versions of WordPress 6.1 (also 6.2) and 7.1.
const wp61, wp71 = 53496, 61833

func optionRow(t *testing.T, tdb *testdb.DB, name string) (value, autoload string) {
	t.Helper()
	if err := tdb.SQL.QueryRow("SELECT option_value, autoload FROM "+testdb.Prefix+"options WHERE option_name = ?", name).Scan(&value, &autoload); err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return value, autoload
}

func TestModifyOption_CreatesKeepsAutoloadAndWritesNothingOnError(t *testing.T) {
	tdb := testdb.New(t)
	db := tdb.Store(t)
	ctx := context.Background()

	// Missing: created with the autoload of a new row, modify sees found=false.
	err := db.ModifyOption(ctx, "themeopts_options", wp71, nil, func(v string, found bool) (string, error) {
		if found || v != "" {
			t.Errorf("missing row: modify got (%q, %v)", v, found)
		}
		return `a:1:{s:1:"a";i:1;}`, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if v, al := optionRow(t, tdb, "themeopts_options"); v != `a:1:{s:1:"a";i:1;}` || al != "auto" {
		t.Errorf("created row = (%q, %q)", v, al)
	}

	// Existing: autoload kept as it was.
	tdb.SQL.Exec("UPDATE " + testdb.Prefix + "options SET autoload = 'no' WHERE option_name = 'themeopts_options'")
	if err := db.ModifyOption(ctx, "themeopts_options", wp61, nil, func(v string, found bool) (string, error) {
		if !found || v != `a:1:{s:1:"a";i:1;}` {
			t.Errorf("existing row: modify got (%q, %v)", v, found)
		}
		return `a:0:{}`, nil
	}); err != nil {
		t.Fatal(err)
	}
	if v, al := optionRow(t, tdb, "themeopts_options"); v != `a:0:{}` || al != "no" {
		t.Errorf("updated row = (%q, %q)", v, al)
	}

	// An error from modify: nothing written, the error as is.
	boom := errors.New("boom")
	if err := db.ModifyOption(ctx, "themeopts_options", wp61, nil, func(string, bool) (string, error) { return "x", boom }); err != boom {
		t.Errorf("err = %v, want boom", err)
	}
	if err := db.ModifyOption(ctx, "never_created", wp61, nil, func(string, bool) (string, error) { return "x", boom }); err != boom {
		t.Errorf("err = %v, want boom", err)
	}
	if v, _ := optionRow(t, tdb, "themeopts_options"); v != `a:0:{}` {
		t.Errorf("row after failed modify = %q", v)
	}
	if _, err := db.RawOption(ctx, "never_created"); !errors.Is(err, wpsidecar.ErrNotFound) {
		t.Errorf("never_created: %v", err)
	}
}

// TestModifyOption_ConcurrentNoLostUpdate: 20 writers each add their own key
// to one serialized array, starting from a missing row; all 20 are there.
func TestModifyOption_ConcurrentNoLostUpdate(t *testing.T) {
	tdb := testdb.New(t)
	db := tdb.Store(t)
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- db.ModifyOption(context.Background(), "set", wp61, nil, func(v string, found bool) (string, error) {
				set := phpserial.Value{Kind: phpserial.Array}
				if found {
					var err error
					if set, err = phpserial.Unserialize(v); err != nil {
						return "", err
					}
				}
				set.Entries = append(set.Entries, phpserial.Entry{Key: phpserial.StrKey(fmt.Sprintf("id_%d", i)), Value: phpserial.Value{Kind: phpserial.Int, Int: int64(i)}})
				return phpserial.Serialize(set), nil
			})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	v, _ := optionRow(t, tdb, "set")
	set, err := phpserial.Unserialize(v)
	if err != nil || len(set.Entries) != 20 {
		t.Fatalf("stored %q (%v): want 20 entries", v, err)
	}
	for i := 0; i < 20; i++ {
		if _, ok := set.Get(fmt.Sprintf("id_%d", i)); !ok {
			t.Errorf("id_%d lost", i)
		}
	}
}

// TestUpdateOptionAutoload: the autoload update_option($name, $value)
// leaves, by version, the row's autoload before and the serialized size
// (wp-includes/option.php: update_option, add_option,
// wp_determine_option_autoload_value and
// wp_filter_default_autoload_value_via_option_size of 6.1, 6.5, 6.6, 6.8,
// 7.1).
func TestUpdateOptionAutoload(t *testing.T) {
	const (
		wp64 = 56657
		wp65 = 57155 // also 6.6's: taken for 6.6
		wp67 = 58975
		wp68 = 60421
	)
	const none = "(none)"
	for _, c := range []struct {
		version  int64
		existing string // none: no row
		size     int
		want     string
	}{
		// Before 6.6: a new row "yes" whatever its size; a row keeps its own.
		{wp61, none, 10, "yes"},
		{wp61, none, 150001, "yes"},
		{wp64, none, 10, "yes"},
		{wp65 - 1, none, 200000, "yes"},
		{wp61, "no", 10, "no"},
		{wp61, "yes", 200000, "yes"},
		{wp61, "auto", 200000, "auto"},
		{wp64, "auto-on", 10, "auto-on"},
		{wp65 - 1, "auto-off", 10, "auto-off"},
		// 6.6 and later: a new row "auto", "auto-off" over 150000 bytes
		// (the size must be greater: 150000 is still "auto").
		{wp65, none, 10, "auto"},
		{wp65, none, 150001, "auto-off"},
		{wp67, none, 0, "auto"},
		{wp68, none, 150000, "auto"},
		{wp71, none, 150001, "auto-off"},
		// An automatic row is decided again, the same way.
		{wp71, "auto", 10, "auto"},
		{wp71, "auto", 150001, "auto-off"},
		{wp71, "auto-off", 150000, "auto"},
		{wp71, "auto-off", 150001, "auto-off"},
		{wp68, "auto-on", 10, "auto"},
		{wp68, "auto-on", 200000, "auto-off"},
		{wp65, "auto", 150001, "auto-off"},
		// Any other keeps its own, even over the limit.
		{wp71, "yes", 200000, "yes"},
		{wp71, "no", 10, "no"},
		{wp71, "on", 200000, "on"},
		{wp71, "off", 10, "off"},
		{wp68, "", 200000, ""},
		{wp71, "AUTO", 200000, "AUTO"}, // in_array(…, true) compares exactly
	} {
		got := store.UpdateOptionAutoload(c.version, strings.TrimPrefix(c.existing, none), c.existing != none, c.size)
		if got != c.want {
			t.Errorf("UpdateOptionAutoload(%d, %q, %d) = %q, want %q", c.version, c.existing, c.size, got, c.want)
		}
	}
}

// TestModifyOption_AutoloadAsUpdateOption: the rows ModifyOption writes
// get the autoload of UpdateOptionAutoload, in the database.
func TestModifyOption_AutoloadAsUpdateOption(t *testing.T) {
	tdb := testdb.New(t)
	db := tdb.Store(t)
	ctx := context.Background()
	large := `s:150001:"` + strings.Repeat("x", 150001) + `";` // 150012 bytes
	small := `a:1:{s:1:"a";i:1;}`
	for _, c := range []struct {
		name     string
		version  int64
		existing string // "" with before "": no row
		before   string
		value    string
		want     string
	}{
		{"new_small_71", wp71, "", "", small, "auto"},
		{"new_large_71", wp71, "", "", large, "auto-off"},
		{"new_large_61", wp61, "", "", large, "yes"},
		{"auto_grows_71", wp71, "auto", "a:0:{}", large, "auto-off"},
		{"auto_off_shrinks_71", wp71, "auto-off", large, small, "auto"},
		{"auto_on_71", wp71, "auto-on", "a:0:{}", small, "auto"},
		{"auto_grows_61", wp61, "auto", "a:0:{}", large, "auto"},
		{"yes_grows_71", wp71, "yes", "a:0:{}", large, "yes"},
		{"on_grows_71", wp71, "on", "a:0:{}", large, "on"},
		{"off_71", wp71, "off", "a:0:{}", small, "off"},
		// Unchanged: nothing written, the autoload with it.
		{"auto_on_unchanged_71", wp71, "auto-on", small, small, "auto-on"},
		{"auto_large_unchanged_71", wp71, "auto", large, large, "auto"},
		// A row PHP reads as false is written as a new one (add_option).
		{"false_no_71", wp71, "no", "b:0;", small, "auto"},
		{"false_no_61", wp61, "no", "b:0;", small, "yes"},
		{"corrupt_off_71", wp71, "off", `s:9:"short";`, large, "auto-off"},
	} {
		if c.before != "" {
			if _, err := tdb.SQL.Exec("INSERT INTO "+testdb.Prefix+"options (option_name, option_value, autoload) VALUES (?, ?, ?)", c.name, c.before, c.existing); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.ModifyOption(ctx, c.name, c.version, nil, func(string, bool) (string, error) { return c.value, nil }); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if v, al := optionRow(t, tdb, c.name); v != c.value || al != c.want {
			t.Errorf("%s: row (%.20q…, %q), want autoload %q", c.name, v, al, c.want)
		}
	}
}
