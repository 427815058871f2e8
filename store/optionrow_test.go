package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/wpsidecar/wpsidecar/internal/testdb"
	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/store/phpserial"
)

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

	// Missing: created with the autoload given, modify sees found=false.
	err := db.ModifyOption(ctx, "themeopts_options", "auto", nil, func(v string, found bool) (string, error) {
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
	if err := db.ModifyOption(ctx, "themeopts_options", "yes", nil, func(v string, found bool) (string, error) {
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
	if err := db.ModifyOption(ctx, "themeopts_options", "yes", nil, func(string, bool) (string, error) { return "x", boom }); err != boom {
		t.Errorf("err = %v, want boom", err)
	}
	if err := db.ModifyOption(ctx, "never_created", "yes", nil, func(string, bool) (string, error) { return "x", boom }); err != boom {
		t.Errorf("err = %v, want boom", err)
	}
	if v, _ := optionRow(t, tdb, "themeopts_options"); v != `a:0:{}` {
		t.Errorf("row after failed modify = %q", v)
	}
	if _, err := db.RawOption(ctx, "never_created"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("never_created: %v", err)
	}
	if got := []string{store.OptionAutoload(53496), store.OptionAutoload(57154), store.OptionAutoload(57155), store.OptionAutoload(60421)}; fmt.Sprint(got) != "[yes yes auto auto]" {
		t.Errorf("OptionAutoload = %v", got)
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
			errs <- db.ModifyOption(context.Background(), "set", "yes", nil, func(v string, found bool) (string, error) {
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
