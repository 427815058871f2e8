//go:build e2e

package e2e

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestHistoryScreen: the companion plugin's Tools → Change history page,
// through the sidecar. An administrator gets the page (its fixed DOM, the
// script with its settings and its strings translated as PHP translates
// them, a script node accepts), a menu item, and the history route the
// script calls answers them with the cookie and the wp_rest nonce; an
// editor gets neither page nor menu item. PHP logs nothing on the way,
// notices and deprecations included.
func TestHistoryScreen(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is needed to check the page's script: make deps")
	}
	for _, option := range []string{"wpsidecar_test_all_errors", "wpsidecar_test_translate"} {
		site.PHP(t, phpSet(option, "1")+"; return true;", nil)
		t.Cleanup(func() { site.PHP(t, phpSet(option, "")+"; return true;", nil) })
	}
	phpLog := filepath.Join(site.Dir, "wp", "logs", "php-errors.log")
	logged := fileSize(phpLog)

	const page = "/wp-admin/tools.php?page=wpsidecar-history"
	admin := site.Login(t, site.Users["administrator"])
	resp, body := get(t, admin, page)
	if resp.StatusCode != 200 {
		t.Fatalf("the page as administrator: %d %.300s", resp.StatusCode, body)
	}
	for _, want := range []string{
		`<div class="wrap" id="wpsidecar-history" data-state="loading">`,
		`<h1>xx-Change history</h1>`,
		`<form id="wpsidecar-history-filters"`,
		`<select id="wpsidecar-filter-namespace" name="namespace">`,
		`<input type="date" id="wpsidecar-filter-since"`,
		`<p id="wpsidecar-history-status" role="status"></p>`,
		`<table id="wpsidecar-history-table" class="wp-list-table widefat striped">`,
		`<button type="button" id="wpsidecar-page-next"`,
		`<dialog id="wpsidecar-revert-dialog" aria-labelledby="wpsidecar-revert-title"`,
		`<button type="button" id="wpsidecar-revert-confirm" class="button button-primary">xx-Revert</button>`,
		`/wp-includes/js/dist/api-fetch.`,
		`/wp-includes/js/dist/i18n.`,
		`window.wpsidecarHistory = {"perPage":20,"timezone":"Europe\/Berlin","gmtOffset":`,
		// The script's strings, as PHP's translations have them.
		`"Revert":["xx-Revert"]`,
		`"Page %1$s of %2$s":["xx-Page %1$s of %2$s"]`,
		`"PHP \/ wp-admin \/ SQL (seen by the change feed)":["xx-PHP \/ wp-admin \/ SQL (seen by the change feed)"]`,
		`}, 'wpsidecar' );`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page has no %s", want)
		}
	}
	if !menuItem.MatchString(body) {
		t.Error("the page has no menu item for itself")
	}
	checkScript(t, node, body)

	// The route the script calls, as it calls it: the cookie and the nonce.
	req, _ := http.NewRequest(http.MethodGet, site.URL+"/wp-json/wpsidecar/v1/history?per_page=1", nil)
	req.Header.Set("X-WP-Nonce", site.RESTNonce(t, admin))
	resp, body = do(t, admin, req)
	if resp.StatusCode != 200 || resp.Header.Get("X-WP-Total") == "" || resp.Header.Get("X-WP-TotalPages") == "" || !strings.HasPrefix(body, "[") {
		t.Errorf("history with the cookie and the nonce: %d %v %.300s", resp.StatusCode, resp.Header, body)
	}

	// An editor: no menu item, and WordPress's own refusal of the page.
	editor := site.Login(t, site.Users["editor"])
	resp, body = get(t, editor, "/wp-admin/")
	if resp.StatusCode != 200 || !toolsMenu.MatchString(body) || strings.Contains(body, "wpsidecar-history") {
		t.Errorf("the dashboard as editor: %d, Tools menu %v, the history's item %v", resp.StatusCode,
			toolsMenu.MatchString(body), strings.Contains(body, "wpsidecar-history"))
	}
	resp, body = get(t, editor, page)
	if resp.StatusCode != 403 || !strings.Contains(body, "Sorry, you are not allowed to access this page.") {
		t.Errorf("the page as editor: %d %.300s", resp.StatusCode, body)
	}

	if b, _ := os.ReadFile(phpLog); int64(len(b)) > logged {
		t.Errorf("PHP logged:\n%s", b[logged:])
	}
}

// WordPress's menu links, quoted as its version quotes them.
var (
	menuItem  = regexp.MustCompile(`<a href=["']tools\.php\?page=wpsidecar-history["'][^>]*>xx-Change history</a>`)
	toolsMenu = regexp.MustCompile(`href=["']tools\.php["']`)
)

// checkScript hands the page's script (the inline one after the handle)
// to node, which refuses a syntax error.
func checkScript(t *testing.T, node, page string) {
	t.Helper()
	m := regexp.MustCompile(`(?s)<script[^>]*\bid=["']wpsidecar-history-js-after["'][^>]*>(.*?)</script>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("the page has no wpsidecar-history-js-after script")
	}
	file := filepath.Join(t.TempDir(), "history.js")
	if err := os.WriteFile(file, []byte(m[1]), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(node, "--check", file).CombinedOutput(); err != nil {
		t.Errorf("node --check: %v\n%s", err, out)
	}
}

// fileSize is a file's size, 0 when it does not exist yet (PHP-FPM makes
// its error log with the first line).
func fileSize(name string) int64 {
	fi, err := os.Stat(name)
	if err != nil {
		return 0
	}
	return fi.Size()
}
