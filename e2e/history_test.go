//go:build e2e

package e2e

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar/internal/harness/testwait"
	"github.com/wpsidecar/wpsidecar/internal/harness/wptest"
)

// TestExportImportHistory, against a real WordPress with the binlog feed:
// an export, edited and imported, changes exactly the edited group and
// option id (PHP's get_option and the PHP twin routes see them) and keeps
// what JSON cannot tell apart byte for byte; a second import and a dry run
// write nothing; a save through the sidecar and a change PHP makes both
// appear in the history with who made them; reverting PHP's change
// restores the value PHP then reads, and reverting it again answers 412.
func TestExportImportHistory(t *testing.T) {
	fs := startFeedSite(t, "", "")
	themeoptsConfig, _ := filepath.Abs("../web/themeopts/testdata/config.json")
	admin := fs.Users["administrator"]
	creds := basic(admin.Login, admin.ApplicationPassword)
	must := func(a answer, status int) answer {
		t.Helper()
		if a.status != status {
			t.Fatalf("%d %s, want %d", a.status, a.body, status)
		}
		return a
	}
	cli := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(fs.Bin, append(args, "--wp-config", fs.WPConfig, "--themeopts-config", themeoptsConfig)...)
		cmd.Env = []string{} // everything from wp-config.php, as the site's own sidecar (not the tests' WPSIDECAR_TEST_* variables)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("wpsidecar %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	php := func(code string) string {
		t.Helper()
		var out string
		fs.PHP(t, code, &out)
		return out
	}
	row := func() string {
		return php(`return get_option("themeopts_options") === false ? "" : serialize(get_option("themeopts_options"));`)
	}
	stamps := func() string {
		return php(`global $wpdb; return json_encode($wpdb->get_results("SELECT group_key, title, updated_at FROM {$wpdb->prefix}fieldmgr_groups ORDER BY group_key"));`)
	}

	// Two groups and a saved set; PHP adds what JSON cannot tell apart.
	for _, k := range []string{"hx_a", "hx_b"} {
		must(ask(t, fs.URL, "", http.MethodPost, "/wp-json/fieldmgr/v1/field-groups",
			`{"group_key":"`+k+`","title":"Title `+k+`","config":{"type":"post","post_type":"post","fields":{"f":{"type":"text","label":"F"}}}}`, append(creds, "Content-Type", "application/json")...), 201)
	}
	must(ask(t, fs.URL, "", http.MethodPost, "/wp-json/themeopts/v1/options", `{"accent_color":"#111111","tagline":"one"}`,
		append(creds, "Content-Type", "application/json")...), 200)
	php(`$o = get_option("themeopts_options"); $s = new stdClass; $s->a = 1; $o["php_extra"] = array(7 => 1.0, "obj" => $s, "empty" => new stdClass);
		update_option("themeopts_options", $o); return "ok";`)
	exact := row()
	if !strings.Contains(exact, `i:7;d:1;`) || !strings.Contains(exact, `O:8:"stdClass"`) {
		t.Fatalf("PHP's row: %s", exact)
	}

	// Export; import as it is: nothing.
	dir := t.TempDir()
	cli("export", dir)
	again := t.TempDir()
	cli("export", again)
	for _, name := range []string{"fieldmgr/hx_a.json", "themeopts/themeopts_options.json"} {
		a, _ := os.ReadFile(filepath.Join(dir, name))
		b, _ := os.ReadFile(filepath.Join(again, name))
		if len(a) == 0 || string(a) != string(b) {
			t.Errorf("%s: two exports differ or are empty:\n%s\n%s", name, a, b)
		}
	}
	// Dated in the past: a write would move updated_at.
	php(`global $wpdb; $wpdb->query("UPDATE {$wpdb->prefix}fieldmgr_groups SET updated_at = '2001-01-01 00:00:00'"); return "ok";`)
	before := stamps()
	if out := cli("import", dir); !strings.Contains(out, "nothing to change") {
		t.Errorf("importing what is there: %s", out)
	}
	if row() != exact || stamps() != before {
		t.Errorf("importing what is there wrote:\n%s\n%s", row(), stamps())
	}

	// Edit one group's title and one option id.
	edit := func(name, from, to string) {
		p := filepath.Join(dir, name)
		b, _ := os.ReadFile(p)
		if !strings.Contains(string(b), from) {
			t.Fatalf("%s has no %q:\n%s", name, from, b)
		}
		os.WriteFile(p, []byte(strings.Replace(string(b), from, to, 1)), 0o644)
	}
	edit("fieldmgr/hx_a.json", `"Title hx_a"`, `"Edited hx_a"`)
	edit("themeopts/themeopts_options.json", `"#111111"`, `"#222222"`)
	dry := cli("import", dir, "--dry-run")
	for _, want := range []string{"fieldmgr: change hx_a", "themeopts themeopts_options: change accent_color", "dry run: nothing written"} {
		if !strings.Contains(dry, want) {
			t.Errorf("dry run says %q, not %q", dry, want)
		}
	}
	if strings.Contains(dry, "hx_b") || strings.Contains(dry, "php_extra") || row() != exact || stamps() != before {
		t.Errorf("dry run: %s\nrow %s\n%s", dry, row(), stamps())
	}
	cli("import", dir)
	want := strings.Replace(exact, `#111111`, `#222222`, 1)
	if got := row(); got != want {
		t.Errorf("after the import PHP reads\n %s\nwant\n %s", got, want)
	}
	twin := ask(t, fs.WPURL, "", http.MethodGet, "/wp-json/twin/v1/field-groups/hx_a", "", creds...)
	if !strings.Contains(twin.body, `"title":"Edited hx_a"`) {
		t.Errorf("the PHP route after the import: %s", twin.body)
	}
	var afterStamps, beforeStamps []map[string]string
	json.Unmarshal([]byte(stamps()), &afterStamps)
	json.Unmarshal([]byte(before), &beforeStamps)
	if len(afterStamps) != 2 || afterStamps[1]["updated_at"] != beforeStamps[1]["updated_at"] || afterStamps[0]["updated_at"] == beforeStamps[0]["updated_at"] {
		t.Errorf("only hx_a should have moved:\n%s\n%s", before, stamps())
	}
	if out := cli("import", dir); !strings.Contains(out, "nothing to change") {
		t.Errorf("a second import: %s", out)
	}

	// What an import refuses whatever the flags, exiting 1, and PHP reads
	// the row as before: an object in "php" the row does not hold (PHP
	// would make it on reading), and values POST /options refuses (after
	// d:INF, PHP's own route would answer 500 rest_encode_error).
	optsFile := filepath.Join(dir, "themeopts", "themeopts_options.json")
	saved, _ := os.ReadFile(optsFile)
	imported := row()
	for _, c := range []struct {
		edits [][2]string
		want  string
	}{
		{[][2]string{{`"tagline": "one"`, `"tagline": {"a": 1}`}, {`s:7:\"tagline\";s:3:\"one\";`, `s:7:\"tagline\";O:3:\"Foo\":1:{s:1:\"a\";i:1;}`}},
			`php: "tagline" holds a PHP object (Foo) the row does not hold: objects are not imported`},
		{[][2]string{{`"#222222"`, `"red}</style><script>alert(1)</script>"`}},
			`Invalid value for option "accent_color": must be a hex color (#rgb, #rrggbb or #rrggbbaa) or "".`},
		{[][2]string{{`"tagline": "one"`, `"tagline": "one", "nope": 1`}}, `Invalid value for option "nope": is not an option of the theme options configuration.`},
		{[][2]string{{`"tagline": "one"`, `"tagline": "one", "columns": 1e700`}}, `Invalid value for option "columns": must be a number.`},
	} {
		os.WriteFile(optsFile, saved, 0o644)
		for _, e := range c.edits {
			edit("themeopts/themeopts_options.json", e[0], e[1])
		}
		cmd := exec.Command(fs.Bin, "import", dir, "--force", "--wp-config", fs.WPConfig, "--themeopts-config", themeoptsConfig)
		cmd.Env = []string{} // the site's configuration only, as cli above
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if want := "wpsidecar: " + optsFile + ": " + c.want + "\n"; !errors.As(err, &exit) || exit.ExitCode() != 1 || string(out) != want {
			t.Errorf("import --force: %v\n%s\nwant exit 1 and\n%s", err, out, want)
		}
		if got := row(); got != imported {
			t.Errorf("after a refused import PHP reads\n %s\nwant\n %s", got, imported)
		}
	}
	os.WriteFile(optsFile, saved, 0o644)

	// The history: the import, a save through the sidecar, a change by PHP.
	type entry struct {
		ID        int64           `json:"id"`
		Namespace string          `json:"namespace"`
		Key       string          `json:"key"`
		Before    json.RawMessage `json:"before"`
		After     json.RawMessage `json:"after"`
		User      struct {
			ID    int64  `json:"id"`
			Login string `json:"login"`
		} `json:"user"`
		Via string `json:"via"`
	}
	list := func(query string) ([]entry, http.Header) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, fs.URL+"/wp-json/wpsidecar/v1/history"+query, nil)
		req.Header.Set(creds[0], creds[1])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("history%s: %d %s", query, resp.StatusCode, b)
		}
		var out []entry
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%v: %s", err, b)
		}
		return out, resp.Header
	}
	waitFor := func(what string, ok func([]entry) (int64, bool)) (int64, time.Duration) {
		t.Helper()
		start := time.Now()
		var id int64
		testwait.For(t, what+" in the history", func() bool {
			l, _ := list("?namespace=themeopts&key=accent_color&per_page=5")
			var found bool
			id, found = ok(l)
			return found
		})
		return id, time.Since(start)
	}
	l, _ := list("?namespace=themeopts&key=accent_color")
	if len(l) == 0 || l[0].Via != "import" || string(l[0].After) != `"#222222"` {
		t.Errorf("the import's entry: %+v", l)
	}
	must(ask(t, fs.URL, "", http.MethodPost, "/wp-json/themeopts/v1/options", `{"accent_color":"#333333"}`, append(creds, "Content-Type", "application/json")...), 200)
	_, took := waitFor("the sidecar's save", func(l []entry) (int64, bool) {
		return 0, len(l) > 0 && string(l[0].After) == `"#333333"` && l[0].User.Login == admin.Login && l[0].Via == "rest"
	})
	t.Logf("the sidecar's save in the history after %v", took)
	php(`$o = get_option("themeopts_options"); $o["accent_color"] = "#444444"; update_option("themeopts_options", $o); return "ok";`)
	phpEntry, took := waitFor("PHP's change", func(l []entry) (int64, bool) {
		if len(l) > 0 && string(l[0].After) == `"#444444"` && string(l[0].Before) == `"#333333"` && l[0].User.Login == "php" && l[0].Via == "binlog" {
			return l[0].ID, true
		}
		return 0, false
	})
	t.Logf("PHP's change in the history after %v", took)
	if took > time.Second {
		t.Logf("note: over a second on this (busy?) machine")
	}

	// Pagination as WordPress does it.
	page, hdr := list("?per_page=1&page=2")
	if len(page) != 1 || hdr.Get("X-WP-Total") == "" || hdr.Get("X-WP-TotalPages") != hdr.Get("X-WP-Total") {
		t.Errorf("per_page=1&page=2: %d entries, X-WP-Total %q, X-WP-TotalPages %q", len(page), hdr.Get("X-WP-Total"), hdr.Get("X-WP-TotalPages"))
	}
	a := ask(t, fs.URL, "", http.MethodGet, "/wp-json/wpsidecar/v1/history?per_page=101", "", creds...)
	if a.status != 400 || !strings.Contains(a.body, `"code":"rest_invalid_param"`) {
		t.Errorf("per_page=101: %d %s", a.status, a.body)
	}
	if a := ask(t, fs.URL, "", http.MethodGet, "/wp-json/wpsidecar/v1/history", ""); a.status != 401 {
		t.Errorf("anonymous: %d %s", a.status, a.body)
	}
	editor := fs.Users["editor"]
	if a := ask(t, fs.URL, "", http.MethodGet, "/wp-json/wpsidecar/v1/history", "", basic(editor.Login, editor.ApplicationPassword)...); a.status != 403 {
		t.Errorf("an editor: %d %s", a.status, a.body)
	}

	// Revert PHP's change: PHP reads the value before it; again: 412.
	revert := "/wp-json/wpsidecar/v1/history/" + strconv.FormatInt(phpEntry, 10) + "/revert"
	must(ask(t, fs.URL, "", http.MethodPost, revert, "", creds...), 200)
	if got := php(`return get_option("themeopts_options")["accent_color"];`); got != "#333333" {
		t.Errorf("after the revert PHP reads %q", got)
	}
	a = ask(t, fs.URL, "", http.MethodPost, revert, "", creds...)
	if a.status != 412 || !strings.Contains(a.body, `"code":"wpsidecar_history_changed"`) {
		t.Errorf("reverting again: %d %s", a.status, a.body)
	}
	must(ask(t, fs.URL, "", http.MethodPost, revert+"?force=true", "", creds...), 200)
	if a := ask(t, fs.URL, "", http.MethodPost, "/wp-json/wpsidecar/v1/history/999999/revert", "", creds...); a.status != 404 {
		t.Errorf("no such entry: %d %s", a.status, a.body)
	}
	l, _ = list("?namespace=themeopts&key=accent_color&per_page=1")
	if len(l) != 1 || l[0].Via != "revert" || l[0].User.Login != admin.Login {
		t.Errorf("the revert, recorded: %+v", l)
	}

	// The command line: history and revert.
	if out := cli("history", "--namespace", "fieldmgr", "--key", "hx_a"); !strings.Contains(out, "fieldmgr") || !strings.Contains(out, "hx_a") {
		t.Errorf("wpsidecar history: %s", out)
	}
	gl, _ := list("?namespace=fieldmgr&key=hx_a&per_page=1")
	cli("revert", strconv.FormatInt(gl[0].ID, 10))
	if got := php(`global $wpdb; return $wpdb->get_var("SELECT title FROM {$wpdb->prefix}fieldmgr_groups WHERE group_key = 'hx_a'");`); got != "Title hx_a" {
		t.Errorf("wpsidecar revert of the import's change: the title is %q", got)
	}
}

// TestHistoryNamespacePermissions, on the real WordPress with the theme
// options behind switch_themes: an administrator WordPress itself denies
// switch_themes (WP_User::add_cap) may not read the theme options (403),
// and the history shows them only its field groups' entries (X-WP-Total
// counting those), no theme options entry by namespace or key, and refuses
// to revert one (404, PHP's get_option unchanged), while a group's entry
// reverts (security round 3, item 2).
func TestHistoryNamespacePermissions(t *testing.T) {
	raw, err := os.ReadFile("../web/themeopts/testdata/config.json")
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "themeopts.json")
	if err := os.WriteFile(cfg, []byte(strings.Replace(string(raw), `"capability": "edit_theme_options"`, `"capability": "switch_themes"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := wptest.Start(wptest.Options{SidecarArgs: []string{"--themeopts-config", cfg}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("sidecar log:\n%s", tail(ws.SidecarLog(), 30))
		}
		ws.Stop()
	})
	admin := ws.Users["administrator"]
	creds := basic(admin.Login, admin.ApplicationPassword)
	must := func(a answer, status int) answer {
		t.Helper()
		if a.status != status {
			t.Fatalf("%d %s, want %d", a.status, a.body, status)
		}
		return a
	}
	// The manager: an administrator denied switch_themes, by WordPress's own
	// API, with an application password.
	var manager struct {
		Login     string `json:"login"`
		Password  string `json:"password"`
		CanManage bool   `json:"can_manage"`
		CanSwitch bool   `json:"can_switch"`
	}
	ws.PHP(t, `$id = wp_insert_user(array("user_login" => "e2e_manager", "user_pass" => "pw-manager-e2e", "user_email" => "e2e_manager@example.test", "role" => "administrator"));
		if (is_wp_error($id)) { return $id->get_error_message(); }
		$u = get_user_by("id", $id);
		$u->add_cap("switch_themes", false);
		$created = WP_Application_Passwords::create_new_application_password($id, array("name" => "e2e"));
		clean_user_cache($id);
		return array("login" => "e2e_manager", "password" => $created[0],
			"can_manage" => user_can($id, "manage_options"), "can_switch" => user_can($id, "switch_themes"));`, &manager)
	if !manager.CanManage || manager.CanSwitch || manager.Password == "" {
		t.Fatalf("the manager as WordPress sees them: %+v", manager)
	}
	mcreds := basic(manager.Login, manager.Password)

	// A group and two saves of the theme options, by the administrator.
	must(ask(t, ws.URL, "", http.MethodPost, "/wp-json/fieldmgr/v1/field-groups",
		`{"group_key":"perm_g","title":"Perm","config":{"type":"post","post_type":"post","fields":{"f":{"type":"text","label":"F"}}}}`, append(creds, "Content-Type", "application/json")...), 201)
	for _, v := range []string{"UA-SECRET-1", "UA-SECRET-2"} {
		must(ask(t, ws.URL, "", http.MethodPost, "/wp-json/themeopts/v1/options", `{"tagline":"`+v+`"}`, append(creds, "Content-Type", "application/json")...), 200)
	}
	tagline := func() string {
		var out string
		ws.PHP(t, `return get_option("themeopts_options")["tagline"];`, &out)
		return out
	}
	if got := tagline(); got != "UA-SECRET-2" {
		t.Fatalf("PHP reads the tagline %q", got)
	}

	type entry struct {
		ID        int64  `json:"id"`
		Namespace string `json:"namespace"`
	}
	list := func(c []string, query string) ([]entry, string, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, ws.URL+"/wp-json/wpsidecar/v1/history"+query, nil)
		req.Header.Set(c[0], c[1])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("history%s: %d %s", query, resp.StatusCode, b)
		}
		var out []entry
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%v: %s", err, b)
		}
		var ns []string
		for _, e := range out {
			ns = append(ns, e.Namespace)
		}
		return out, strings.Join(ns, ","), resp.Header.Get("X-WP-Total")
	}
	all, ns, total := list(creds, "")
	if ns != "themeopts,themeopts,fieldmgr" || total != "3" {
		t.Fatalf("the administrator's history: %s, X-WP-Total %s", ns, total)
	}
	themeEntry, groupEntry := all[0].ID, all[2].ID

	if a := ask(t, ws.URL, "", http.MethodGet, "/wp-json/themeopts/v1/options", "", mcreds...); a.status != 403 {
		t.Errorf("the manager reads the theme options: %d %s", a.status, a.body)
	}
	for _, c := range []struct{ query, want, total string }{
		{"", "fieldmgr", "1"},
		{"?namespace=themeopts", "", "0"},
		{"?key=tagline", "", "0"},
	} {
		if _, ns, total := list(mcreds, c.query); ns != c.want || total != c.total {
			t.Errorf("the manager's history%s: %q, X-WP-Total %s; want %q, %s", c.query, ns, total, c.want, c.total)
		}
	}
	revert := func(id int64) string {
		return "/wp-json/wpsidecar/v1/history/" + strconv.FormatInt(id, 10) + "/revert"
	}
	if a := ask(t, ws.URL, "", http.MethodPost, revert(themeEntry)+"?force=true", "", mcreds...); a.status != 404 || !strings.Contains(a.body, `"code":"wpsidecar_history_not_found"`) {
		t.Errorf("the manager reverts a theme options entry: %d %s", a.status, a.body)
	}
	if got := tagline(); got != "UA-SECRET-2" {
		t.Errorf("after the manager's revert PHP reads the tagline %q", got)
	}
	must(ask(t, ws.URL, "", http.MethodPost, revert(groupEntry), "", mcreds...), 200)
	var exists bool
	ws.PHP(t, `global $wpdb; return null !== $wpdb->get_var("SELECT group_key FROM {$wpdb->prefix}fieldmgr_groups WHERE group_key = 'perm_g'");`, &exists)
	if exists {
		t.Error("the manager's revert of the group's creation left the group")
	}
	must(ask(t, ws.URL, "", http.MethodPost, revert(themeEntry), "", creds...), 200)
	if got := tagline(); got != "UA-SECRET-1" {
		t.Errorf("after the administrator's revert PHP reads the tagline %q", got)
	}
}
