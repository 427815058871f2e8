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
	"github.com/wpsidecar/wpsidecar/internal/testdb"
	"github.com/wpsidecar/wpsidecar/store"
)

// TestApplicationPasswords_FirstOne: the site's first application
// password works on its first request, though the settings snapshot was
// read before WordPress set using_application_passwords; while the flag is
// unset, Basic is ignored as WordPress ignores it.
func TestApplicationPasswords_FirstOne(t *testing.T) {
	tdb := testdb.New(t)
	roles, _ := os.ReadFile("testdata/user_roles_6.1.txt")
	tdb.SetOption(t, "wp_user_roles", strings.TrimSpace(string(roles)))
	tdb.SetOption(t, "db_version", "61833")
	db := tdb.Store(t)
	w := store.NewSettingsWatcher(db, time.Hour, store.SiteURLs{})
	if err := w.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	a := auth.New(auth.Options{Store: db, Settings: w, Keys: benchKeys, EnvironmentType: "local", Log: zerolog.Nop()})
	const password = "abcdEFGHijklMNOPqrstUVWX"
	hash := auth.FastHash(password)
	tdb.AddUser(t, "first", "first@example.test", "x",
		[2]string{"wp_capabilities", `a:1:{s:13:"administrator";b:1;}`},
		[2]string{"_application_passwords", fmt.Sprintf(`a:1:{i:0;a:3:{s:4:"uuid";s:1:"u";s:8:"password";s:%d:"%s";s:9:"last_used";i:%d;}}`, len(hash), hash, time.Now().Unix())})
	req, _ := http.NewRequest(http.MethodGet, "/", nil)
	req.SetBasicAuth("first", password)

	if u, err := a.Authenticate(req); err != nil || u != nil {
		t.Fatalf("flag unset: %+v %v; WordPress ignores the header", u, err)
	}
	tdb.SetOption(t, "using_application_passwords", "1") // what create_new_application_password does
	u, err := a.Authenticate(req)
	if err != nil || u == nil || !u.Can("manage_options") {
		t.Fatalf("first application password, before any settings refresh: %+v %v", u, err)
	}
}
