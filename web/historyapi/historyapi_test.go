package historyapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar/store/fieldgrouptable"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/auth"
	"github.com/wpsidecar/wpsidecar/domain/fieldgroup"
	"github.com/wpsidecar/wpsidecar/domain/themeoption"
	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/internal/harness/testsite"
	"github.com/wpsidecar/wpsidecar/internal/reload"
	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/web/fieldmgr"
	"github.com/wpsidecar/wpsidecar/web/historyapi"
	"github.com/wpsidecar/wpsidecar/web/themeopts"
)

// TestHistory_NamespacePermissions: with the theme options behind
// switch_themes, a user with manage_options but not switch_themes (403 on
// themeopts/v1) sees only the field groups' entries, X-WP-Total counting
// only them, finds no theme options entry by namespace or key, and cannot
// revert one (404, the row untouched), while reverting a group's entry
// works; the administrator sees and reverts everything; switch_themes
// without manage_options does not open the history (security round 3,
// item 2).
func TestHistory_NamespacePermissions(t *testing.T) {
	const adminPW, managerPW, stylistPW = "abcdEFGHijklMNOPqrstUVWX", "qwerASDFzxcvTYUIghjkBNML", "zyxwVUTSrqpoNMLKjihgFEDC"
	tdb := testdb.New(t)
	testsite.New(t, tdb, testsite.User{Login: "admin", Role: "administrator", AppPassword: adminPW})
	// Capabilities of the user's own, as WP_User::add_cap writes them.
	addUser := func(login, pw, caps string) {
		h := auth.FastHash(pw)
		tdb.AddUser(t, login, login+"@example.test", "x", [2]string{"wp_capabilities", caps},
			[2]string{"_application_passwords", fmt.Sprintf(`a:1:{i:0;a:3:{s:4:"uuid";s:1:"u";s:8:"password";s:%d:"%s";s:9:"last_used";i:%d;}}`, len(h), h, time.Now().Unix())})
	}
	addUser("manager", managerPW, `a:2:{s:13:"administrator";b:1;s:13:"switch_themes";b:0;}`)
	addUser("stylist", stylistPW, `a:2:{s:10:"subscriber";b:1;s:13:"switch_themes";b:1;}`)

	db := tdb.StoreWith(t, func(o *store.Options) { o.History = true })
	settings := store.NewSettingsWatcher(db, time.Hour, store.SiteURLs{})
	if err := settings.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	a := auth.New(auth.Options{Store: db, Settings: settings, Keys: map[string]string{"AUTH_KEY": "k"}, EnvironmentType: "local", Log: zerolog.Nop()})
	defer a.Wait()
	raw, err := os.ReadFile("../themeopts/testdata/config.json")
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(t.TempDir(), "themeopts.json")
	os.WriteFile(cfgPath, []byte(strings.Replace(string(raw), `"capability": "edit_theme_options"`, `"capability": "switch_themes"`, 1)), 0o644)
	cfg, err := reload.Open(cfgPath, "theme options configuration", themeoption.ParseConfig, func(_ *themeoption.Config, ev *zerolog.Event) *zerolog.Event { return ev }, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Current().Capability != "switch_themes" {
		t.Fatalf("capability %q", cfg.Current().Capability)
	}
	groups, _ := fieldgrouptable.Open(db, testdb.Prefix+"fieldmgr_groups")
	opts := themeopts.NewService(a, db, settings, cfg, zerolog.Nop())
	site := &testsite.Site{DB: db, Settings: settings, Auth: a}
	base := site.Serve(t, fieldmgr.New(a, groups, settings, zerolog.Nop()), opts, historyapi.New(a, db.History(), settings, wpsidecar.Units{fieldgroup.Unit{}, themeoption.Unit{Config: opts.Config}}))

	send := func(method, path, body, login, pw string) (int, string, http.Header) {
		t.Helper()
		return testsite.Send(t, method, base+"/wp-json"+path, body, login, pw)
	}
	must := func(status int, method, path, body string) {
		t.Helper()
		if code, got, _ := send(method, path, body, "admin", adminPW); code != status {
			t.Fatalf("%s %s: %d %s", method, path, code, got)
		}
	}
	// Two groups and two saves of the theme options: two entries of each.
	for _, k := range []string{"g_one", "g_two"} {
		must(201, http.MethodPost, "/fieldmgr/v1/field-groups", `{"group_key":"`+k+`","title":"T","config":{"type":"post","post_type":"post","fields":{"f":{"type":"text","label":"F"}}}}`)
	}
	must(200, http.MethodPost, "/themeopts/v1/options", `{"accent_color":"#111111"}`)
	must(200, http.MethodPost, "/themeopts/v1/options", `{"accent_color":"#222222"}`)
	row := func() string {
		v, err := db.RawOption(context.Background(), "themeopts_options")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	saved := row()

	type entry struct {
		ID        int64  `json:"id"`
		Namespace string `json:"namespace"`
		Key       string `json:"key"`
	}
	list := func(login, pw, query string) ([]entry, string) {
		t.Helper()
		code, body, hdr := send(http.MethodGet, "/wpsidecar/v1/history"+query, "", login, pw)
		if code != 200 {
			t.Fatalf("%s: history%s: %d %s", login, query, code, body)
		}
		var out []entry
		if err := json.Unmarshal([]byte(body), &out); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		return out, hdr.Get("X-WP-Total")
	}
	namespaces := func(l []entry) string {
		var ns []string
		for _, e := range l {
			ns = append(ns, e.Namespace)
		}
		return strings.Join(ns, ",")
	}

	all, total := list("admin", adminPW, "")
	if namespaces(all) != "themeopts,themeopts,fieldmgr,fieldmgr" || total != "4" {
		t.Fatalf("the administrator's history: %+v, X-WP-Total %s", all, total)
	}
	themeEntry, groupEntry := all[0].ID, all[3].ID

	// A bad list parameter (history.ParseFilter's rules) is answered as
	// WordPress answers one: 400 rest_invalid_param, data.params naming it.
	for query, want := range map[string]string{
		"namespace=wp":    `{"code":"rest_invalid_param","message":"Invalid parameter(s): namespace","data":{"status":400,"params":{"namespace":"namespace is not one of fieldmgr, themeopts."}}}`,
		"since=yesterday": `{"code":"rest_invalid_param","message":"Invalid parameter(s): since","data":{"status":400,"params":{"since":"Invalid date."}}}`,
		"page=0":          `{"code":"rest_invalid_param","message":"Invalid parameter(s): page","data":{"status":400,"params":{"page":"page must be between 1 (inclusive) and 2147483647 (inclusive)"}}}`,
		"page=x":          `{"code":"rest_invalid_param","message":"Invalid parameter(s): page","data":{"status":400,"params":{"page":"page is not of type integer."}}}`,
		"per_page=101":    `{"code":"rest_invalid_param","message":"Invalid parameter(s): per_page","data":{"status":400,"params":{"per_page":"per_page must be between 1 (inclusive) and 100 (inclusive)"}}}`,
	} {
		if code, body, _ := send(http.MethodGet, "/wpsidecar/v1/history?"+query, "", "admin", adminPW); code != 400 || body != want {
			t.Errorf("history?%s: %d %s\nwant 400 %s", query, code, body, want)
		}
	}

	if code, body, _ := send(http.MethodGet, "/themeopts/v1/options", "", "manager", managerPW); code != 403 {
		t.Fatalf("the manager reads the theme options: %d %s", code, body)
	}
	for _, c := range []struct{ query, want, total string }{
		{"", "fieldmgr,fieldmgr", "2"},
		{"?per_page=1", "fieldmgr", "2"},
		{"?namespace=fieldmgr", "fieldmgr,fieldmgr", "2"},
		{"?namespace=themeopts", "", "0"},
		{"?key=accent_color", "", "0"},
		{"?namespace=themeopts&key=accent_color", "", "0"},
	} {
		l, total := list("manager", managerPW, c.query)
		if namespaces(l) != c.want || total != c.total {
			t.Errorf("the manager's history%s: %+v, X-WP-Total %s; want %q, %s", c.query, l, total, c.want, c.total)
		}
	}
	code, body, _ := send(http.MethodPost, "/wpsidecar/v1/history/"+strconv.FormatInt(themeEntry, 10)+"/revert?force=true", "", "manager", managerPW)
	if code != 404 || !strings.Contains(body, `"code":"wpsidecar_history_not_found"`) {
		t.Errorf("the manager reverts a theme options entry: %d %s", code, body)
	}
	if got := row(); got != saved {
		t.Errorf("the row after the manager's revert: %s, want %s", got, saved)
	}
	if code, body, _ := send(http.MethodPost, "/wpsidecar/v1/history/"+strconv.FormatInt(groupEntry, 10)+"/revert", "", "manager", managerPW); code != 200 {
		t.Errorf("the manager reverts a group's entry: %d %s", code, body)
	}
	if code, body, _ := send(http.MethodGet, "/wpsidecar/v1/history", "", "stylist", stylistPW); code != 403 {
		t.Errorf("switch_themes without manage_options: %d %s", code, body)
	}
	if code, body, _ := send(http.MethodPost, "/wpsidecar/v1/history/"+strconv.FormatInt(themeEntry, 10)+"/revert", "", "admin", adminPW); code != 200 {
		t.Errorf("the administrator reverts the theme options entry: %d %s", code, body)
	}
	if got := row(); got == saved || !strings.Contains(got, "#111111") {
		t.Errorf("the row after the administrator's revert: %s", got)
	}
}

// TestHistory_Off: with no history kept (--history-retention off) both
// routes answer, after the same authentication and capability check, that
// it is off: 404 wpsidecar_history_off, which a client (the wp-admin
// screen) tells apart from PHP's rest_no_route.
func TestHistory_Off(t *testing.T) {
	const adminPW = "abcdEFGHijklMNOPqrstUVWX"
	tdb := testdb.New(t)
	site := testsite.New(t, tdb, testsite.User{Login: "admin", Role: "administrator", AppPassword: adminPW}, testsite.User{Login: "ed", Role: "editor", AppPassword: adminPW})
	defer site.Auth.Wait()
	if site.DB.History() != nil {
		t.Fatal("the test site keeps a history")
	}
	base := site.Serve(t, historyapi.New(site.Auth, nil, site.Settings, wpsidecar.Units{fieldgroup.Unit{}}))
	const off = `{"code":"wpsidecar_history_off","message":"This site keeps no history: the sidecar runs with --history-retention off.","data":{"status":404}}`
	for _, tc := range []struct {
		method, path, login string
		status              int
		body                string
	}{
		{http.MethodGet, "/wpsidecar/v1/history", "admin", 404, off},
		{http.MethodPost, "/wpsidecar/v1/history/1/revert", "admin", 404, off},
		{http.MethodGet, "/wpsidecar/v1/history", "ed", 403, `{"code":"rest_forbidden","message":"Sorry, you are not allowed to do that.","data":{"status":403}}`},
		{http.MethodGet, "/wpsidecar/v1/history", "", 401, `{"code":"rest_forbidden","message":"Sorry, you are not allowed to do that.","data":{"status":401}}`},
	} {
		pw := adminPW
		if tc.login == "" {
			pw = ""
		}
		if code, body, _ := testsite.Send(t, tc.method, base+"/wp-json"+tc.path, "", tc.login, pw); code != tc.status || body != tc.body {
			t.Errorf("%s %s as %q: %d %s, want %d %s", tc.method, tc.path, tc.login, code, body, tc.status, tc.body)
		}
	}
}
