package auth_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/auth"
	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/store"
)

// TestMultisite_SuperAdminsAndNetworkOptions: on a network, the cookie
// name comes from the network's siteurl (trailing slash kept), application
// passwords from the network flag, and super admins (site_admins) pass
// every capability check.
func TestMultisite_SuperAdminsAndNetworkOptions(t *testing.T) {
	tdb := testdb.New(t)
	tdb.AddSitemeta(t)
	roles, err := os.ReadFile("testdata/user_roles_6.1.txt")
	if err != nil {
		t.Fatal(err)
	}
	tdb.SetOption(t, "wp_user_roles", strings.TrimSpace(string(roles)))
	tdb.SetOption(t, "db_version", "61833")
	addMeta := func(k, v string) {
		if _, err := tdb.SQL.Exec("INSERT INTO wp_sitemeta (site_id, meta_key, meta_value) VALUES (1, ?, ?)", k, v); err != nil {
			t.Fatal(err)
		}
	}
	addMeta("siteurl", "http://localhost/")
	addMeta("using_application_passwords", "1")
	addMeta("site_admins", `a:1:{i:0;s:5:"admin";}`)
	hash := auth.FastHash("abcdEFGHijklMNOPqrstUVWX")
	tdb.AddUser(t, "siteadmin", "s@example.test", "x",
		[2]string{"wp_capabilities", `a:1:{s:10:"subscriber";b:1;}`},
		[2]string{"_application_passwords", fmt.Sprintf(`a:1:{i:0;a:3:{s:4:"uuid";s:1:"u";s:8:"password";s:%d:"%s";s:9:"last_used";i:%d;}}`, len(hash), hash, time.Now().Unix())})
	o := tdb.StoreOptions()
	o.Multisite = true
	db, err := store.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	w := store.NewSettingsWatcher(db, time.Hour, store.SiteURLs{})
	refresh := func() {
		if err := w.Refresh(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	refresh()
	a := auth.New(auth.Options{Store: db, Settings: w, Keys: benchKeys, EnvironmentType: "local", Log: zerolog.Nop()})
	req, _ := http.NewRequest(http.MethodGet, "/", nil)
	req.SetBasicAuth("siteadmin", "abcdEFGHijklMNOPqrstUVWX")
	u, err := a.Authenticate(req)
	if err != nil || u == nil || u.Can("manage_options") {
		t.Fatalf("subscriber on the network: %+v %v", u, err)
	}
	if _, err := tdb.SQL.Exec("UPDATE wp_sitemeta SET meta_value = ? WHERE meta_key = 'site_admins'", `a:2:{i:0;s:5:"admin";i:1;s:9:"siteadmin";}`); err != nil {
		t.Fatal(err)
	}
	refresh()
	if u, err := a.Authenticate(req); err != nil || !u.Can("manage_options") || !u.Can("edit_theme_options") {
		t.Errorf("super admin: %+v %v", u, err)
	}
	// The logged-in cookie's name: md5 of the network siteurl with its slash
	// (vectors: multisite COOKIEHASH c9db569cb388e160e4b86ca1ddff84d7).
	if h := auth.CookieHash("http://localhost/"); h != "c9db569cb388e160e4b86ca1ddff84d7" {
		t.Errorf("COOKIEHASH = %s", h)
	}
}
