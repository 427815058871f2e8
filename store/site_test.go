package store_test

import (
	"context"
	"testing"

	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/store"
)

// TestForSite: a site's view names its own tables ({base}N_ for N > 1,
// the base prefix's for site 1) and the network's global ones with the
// base prefix, reads its own options, and keeps them apart from another
// site's in the memo; a name the feed reports forgets it in every site.
func TestForSite(t *testing.T) {
	tdb := testdb.New(t)
	db := tdb.Store(t)
	site3 := db.ForSite(3)
	for _, c := range []struct{ got, want string }{
		{db.ForSite(1).Table("options"), "wp_options"},
		{site3.Table("options"), "wp_3_options"},
		{site3.Table("fieldmgr_groups"), "wp_3_fieldmgr_groups"},
		{site3.Table("users"), "wp_users"},
		{site3.Table("usermeta"), "wp_usermeta"},
		{site3.Table("sitemeta"), "wp_sitemeta"},
		{site3.Table("blogs"), "wp_blogs"},
		{site3.CapabilitiesKey(), "wp_3_capabilities"},
		{db.CapabilitiesKey(), "wp_capabilities"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
	if _, err := tdb.SQL.Exec("CREATE TABLE wp_3_options LIKE wp_options"); err != nil {
		t.Fatal(err)
	}
	if _, err := tdb.SQL.Exec("INSERT INTO wp_3_options (option_name, option_value, autoload) VALUES ('o', 'site 3', 'yes')"); err != nil {
		t.Fatal(err)
	}
	tdb.SetOption(t, "o", "site 1")
	memo := store.NewMemo(func(context.Context) bool { return true }, 100)
	db.UseMemo(memo)
	ctx := context.Background()
	read := func(d *store.DB) string {
		v, err := d.RawOption(ctx, "o")
		if err != nil {
			return err.Error()
		}
		return v
	}
	for i := 0; i < 2; i++ { // the second time from memory
		if a, b := read(db), read(site3); a != "site 1" || b != "site 3" {
			t.Errorf("read %d: site 1 %q, site 3 %q", i, a, b)
		}
	}
	tdb.SQL.Exec("UPDATE wp_3_options SET option_value = 'changed' WHERE option_name = 'o'")
	memo.Forget(store.Changed{Options: []string{"o"}})
	if got := read(site3); got != "changed" {
		t.Errorf("site 3 after the feed named o: %q", got)
	}
}
