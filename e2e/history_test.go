//go:build e2e

package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestExportImportHistory, against a real WordPress with the binlog feed:
// an export, edited and imported, changes exactly the edited group and
// option id (PHP's get_option and the PHP twin routes see them) and keeps
// what JSON cannot tell apart byte for byte; a second import and a dry run
// write nothing; a save through the sidecar and a change PHP makes both
// appear in the history with who made them; reverting PHP's change
// restores the value PHP then reads, and reverting it again answers 412.
func TestExportImportHistory(t *testing.T) {
	fs := startFeedSite(t, "")
	themeoptsConfig, _ := filepath.Abs("../proxy/themeopts/testdata/config.json")
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
		for {
			l, _ := list("?namespace=themeopts&key=accent_color&per_page=5")
			if id, found := ok(l); found {
				return id, time.Since(start)
			}
			if time.Since(start) > 20*time.Second {
				t.Fatalf("%s: not in the history: %+v", what, l)
			}
			time.Sleep(20 * time.Millisecond)
		}
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
