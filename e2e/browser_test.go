//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/wpsidecar/wpsidecar/internal/harness/testbrowser"
	"github.com/wpsidecar/wpsidecar/internal/harness/testwait"
	"github.com/wpsidecar/wpsidecar/internal/harness/wptest"
)

// historyPage is Tools → Change history, the companion plugin's screen.
const historyPage = "/wp-admin/tools.php?page=wpsidecar-history"

// phpErrors are the lines PHP logged for the site (notices, warnings,
// deprecations, errors) since offset, and the log's size now.
func phpErrors(t *testing.T, fs *wptest.Site, offset int) (string, int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fs.Dir, "wp", "logs", "php-errors.log"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if offset > len(b) {
		offset = len(b)
	}
	return string(b[offset:]), len(b)
}

// TestHistoryScreenInBrowser: Tools → Change history in a real browser
// (Chromium), signed in through wp-login.php, on a WordPress with the
// companion plugin, the binlog feed and the history on: a theme options
// save through the REST API and a change PHP made (update_option, seen by
// the feed) are listed with who made them and how; the diff marks the
// keys added, removed and changed; a revert, confirmed in the dialog,
// gives PHP's get_option the value before back; reverting an older entry
// after PHP changed the value again shows the current value in the
// dialog, and forcing it writes the value before that entry. An editor
// has no menu item and is refused the page. Then the same beside nginx,
// the sidecar routed to by the shipped recipe. No PHP notice or warning,
// no JavaScript console error.
func TestHistoryScreenInBrowser(t *testing.T) {
	fs := startFeedSiteWith(t, wptest.Options{Companion: true}, "", "")
	// The closed network has no Gravatar: wp-admin's avatars would be
	// failed requests in the browser's console.
	fs.PHP(t, `update_option("show_avatars", 0); return "ok";`, nil)
	_, logStart := phpErrors(t, fs, 0)
	t.Cleanup(func() {
		if errs, _ := phpErrors(t, fs, logStart); errs != "" {
			t.Errorf("PHP logged:\n%s", errs)
		}
	})

	t.Run("sidecar", func(t *testing.T) {
		historyFlow(t, fs, http.DefaultClient, "", 16, 18)
	})
	t.Run("editor", func(t *testing.T) {
		b := testbrowser.Start(t, testbrowser.Options{})
		b.SignIn(fs.URL, fs.Users["editor"].Login, fs.Users["editor"].Password, "")
		if n := b.Count(historyMenu); n != 0 {
			t.Errorf("the editor's menu has %d links to the history", n)
		}
		b.AllowNetworkError(`status of 403 \(Forbidden\)`) // the page, refused
		b.Navigate(fs.URL + historyPage)
		b.WaitVisible("body")
		if got := b.Text("body"); !strings.Contains(got, "Sorry, you are not allowed to access this page.") {
			t.Errorf("the editor on the history page: %q", got)
		}
		b.Screenshot("01-editor-refused.png")
	})
	t.Run("nginx", func(t *testing.T) {
		cfg, err := filepath.Abs("../web/themeopts/testdata/config.json")
		if err != nil {
			t.Fatal(err)
		}
		f := startFrontFor(t, fs, "nginx", randomSecret(), "--themeopts-config", cfg)
		// The browser and the REST client ask for the site's own URL, as
		// WordPress writes it into its pages, through nginx as a proxy.
		proxy, _ := url.Parse(f.url)
		client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy)}}
		t.Cleanup(func() {
			if t.Failed() {
				b, _ := os.ReadFile(f.log)
				t.Logf("the history requests nginx's sidecar logged:\n%s", historyRequests(string(b)))
			}
		})
		historyFlow(t, fs, client, strings.TrimPrefix(f.url, "http://"), 20, 22)
		lines := f.accessLines(t, "/wp-json/wpsidecar/v1/history")
		if len(lines) == 0 || lines[0]["served_by"] != "sidecar" {
			t.Errorf("the screen's requests did not reach the sidecar beside nginx: %v", lines)
		}
	})
}

// historyMenu is the link to the history in wp-admin's menu.
const historyMenu = `#adminmenu a[href$="tools.php?page=wpsidecar-history"]`

// typography is a body_font value (a typography field's): strings, and
// subsets a list of them, as JSON, PHP and the screen all keep them.
type typography map[string]any

// with is v with the members kv names (key, value, …) set, or removed
// where the value is "".
func (v typography) with(kv ...string) typography {
	out := maps.Clone(v)
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			delete(out, kv[i])
		} else {
			out[kv[i]] = kv[i+1]
		}
	}
	return out
}

// historyFlow is the administrator's way through the screen, in a browser
// of its own (through proxy, "host:port", when not ""), the REST save made
// with client; size0 and size1 are the body font's sizes before and after
// that save, distinct in each run.
func historyFlow(t *testing.T, fs *wptest.Site, client *http.Client, proxy string, size0, size1 int) {
	t.Cleanup(func() {
		// A step that waits in vain says only what it waited for: which
		// requests the screen made, and how they were answered, say why.
		if t.Failed() {
			t.Logf("the history requests the site's sidecar logged:\n%s", historyRequests(fs.SidecarLog()))
		}
	})
	admin := fs.Users["administrator"]
	b0 := typography{"font-family": "Inter", "font-weight": "400", "font-size": strconv.Itoa(size0), "line-height": "1.5", "subsets": []any{"latin"}}
	b1 := b0.with("font-size", strconv.Itoa(size1))
	b2 := b1.with("subsets", "", "font-weight", "700", "font-style", "italic")
	b3 := b1.with("letter-spacing", "1")

	// b0, then b1 through the REST API (the entry to revert last), then b2
	// by PHP (seen by the feed; the entry to revert first).
	restSave(t, fs, client, b0)
	restSave(t, fs, client, b1)
	rest := waitEntry(t, fs, "rest", b1)
	setBodyFont(t, fs, b2)
	php := waitEntry(t, fs, "binlog", b2)

	b := testbrowser.Start(t, testbrowser.Options{Proxy: proxy})
	b.SignIn(fs.URL, admin.Login, admin.Password, "01-login.png")
	if n := b.Count(historyMenu); n != 1 {
		t.Errorf("the administrator's menu has %d links to the history, want 1", n)
	}
	// The link is in Tools' submenu, shown on hover: the page, opened.
	b.Navigate(fs.URL + historyPage)
	waitReady(t, b)
	restRow, phpRow := entryRow(rest), entryRow(php)
	for _, c := range []struct {
		row, via, who string
	}{
		{restRow, "rest", admin.Login},
		{phpRow, "binlog", "php"},
	} {
		b.WaitVisible(c.row)
		got := map[string]string{"namespace": b.Attr(c.row, "data-namespace"), "key": b.Attr(c.row, "data-key"), "via": b.Attr(c.row, "data-via")}
		if want := map[string]string{"namespace": "themeopts", "key": "body_font", "via": c.via}; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, want %v", c.row, got, want)
		}
		if text := b.Text(c.row); !strings.Contains(text, c.who) {
			t.Errorf("%s does not say who (%s): %q", c.row, c.who, text)
		}
	}
	if text := b.Text(phpRow); !strings.Contains(text, "change feed") {
		t.Errorf("PHP's change does not say the change feed saw it: %q", text)
	}
	b.Screenshot("02-history.png")

	// The diffs: PHP's marks a key added, one removed and one changed;
	// the REST save's only the size changed.
	checkDiff(t, b, phpRow, map[string][]string{"added": {"font-style"}, "removed": {"subsets"}, "changed": {"font-weight"}})
	shot := b.Screenshot("03-diff.png")
	if proxy == "" && *updateDocs {
		keepForDocs(t, shot)
	}
	checkDiff(t, b, restRow, map[string][]string{"added": nil, "removed": nil, "changed": {"font-size"}})

	// Cancel: nothing written, the focus back on the button.
	b.Click(restRow + " button.wpsidecar-revert")
	b.WaitAttr("#wpsidecar-revert-dialog", "open", "")
	b.Click("#wpsidecar-revert-cancel")
	b.WaitGone("#wpsidecar-revert-dialog")
	var back bool
	b.Eval(`(sel) => document.activeElement === document.querySelector(sel)`, &back, restRow+" button.wpsidecar-revert")
	if !back {
		t.Errorf("after Cancel the focus is on %q, not the entry's revert button", b.ActiveElement())
	}

	// Revert PHP's change: PHP reads b1 again. The dialog is opened for the
	// REST save, cancelled and opened for PHP's change within one task, so
	// that the cancel's close event comes after the new opening, as it may
	// when a user is quick or the browser busy: it must not clear the new
	// opening's entry (the confirmation would then do nothing).
	var clicked bool
	b.Eval(`(a, b) => { document.querySelector(a).click(); document.getElementById("wpsidecar-revert-cancel").click(); document.querySelector(b).click(); return true; }`, &clicked,
		restRow+" button.wpsidecar-revert", phpRow+" button.wpsidecar-revert")
	b.WaitAttr("#wpsidecar-revert-dialog", "open", "")
	b.WaitTrue("the focus in the dialog", `() => !!document.activeElement && !!document.activeElement.closest("#wpsidecar-revert-dialog")`)
	if text := b.Text("#wpsidecar-revert-dialog"); !strings.Contains(text, "body_font") || !strings.Contains(text, "latin") {
		t.Errorf("the dialog does not say what it writes back (body_font, with subsets latin): %q", text)
	}
	b.Screenshot("04-revert-confirm.png")
	b.Click("#wpsidecar-revert-confirm")
	b.WaitVisible("#wpsidecar-history-done")
	waitReady(t, b)
	b.Screenshot("05-reverted.png")
	if got := bodyFont(t, fs); !reflect.DeepEqual(got, b1) {
		t.Errorf("after the revert PHP reads %v, want %v", got, b1)
	}

	// PHP changes it again; reverting the REST save is refused (412),
	// the dialog shows the value now, and forcing it writes b0.
	setBodyFont(t, fs, b3)
	waitEntry(t, fs, "binlog", b3)
	b.AllowNetworkError(`status of 412`)
	b.Click(restRow + " button.wpsidecar-revert")
	b.WaitAttr("#wpsidecar-revert-dialog", "open", "")
	b.Click("#wpsidecar-revert-confirm")
	b.WaitVisible("#wpsidecar-revert-force")
	b.WaitAttr("#wpsidecar-history-error", "data-code", "wpsidecar_history_changed")
	// What is there now and what would be written, side by side.
	if text := b.Text("#wpsidecar-revert-now"); !strings.Contains(text, "letter-spacing") || !strings.Contains(text, fmt.Sprintf(`"font-size": "%d"`, size1)) {
		t.Errorf("the dialog's value now does not show PHP's change (letter-spacing, size %d): %q", size1, text)
	}
	if text := b.Text("#wpsidecar-revert-written"); strings.Contains(text, "letter-spacing") || !strings.Contains(text, fmt.Sprintf(`"font-size": "%d"`, size0)) {
		t.Errorf("the dialog's value to write is not the one before the REST save (size %d, no letter-spacing): %q", size0, text)
	}
	b.Screenshot("06-changed-412.png")
	if got := bodyFont(t, fs); !reflect.DeepEqual(got, b3) {
		t.Errorf("after the 412 PHP reads %v, want %v (nothing written)", got, b3)
	}
	b.Click("#wpsidecar-revert-force")
	b.WaitVisible("#wpsidecar-history-done")
	waitReady(t, b)
	b.Screenshot("07-forced.png")
	if got := bodyFont(t, fs); !reflect.DeepEqual(got, b0) {
		t.Errorf("after the forced revert PHP reads %v, want %v", got, b0)
	}

	// Reverting the REST save again: refused (a later change, the forced
	// revert), but that change already put back what it would write, so
	// the dialog says there is nothing to revert, offers Close first and
	// writing it back only as a plain button (the history may miss a
	// change made while no sidecar ran).
	b.Click(restRow + " button.wpsidecar-revert")
	b.WaitAttr("#wpsidecar-revert-dialog", "open", "")
	b.Click("#wpsidecar-revert-confirm")
	b.WaitVisible("#wpsidecar-revert-current")
	if text := b.Text("#wpsidecar-revert-current"); !strings.Contains(text, "there is nothing to revert") || !strings.Contains(text, fmt.Sprintf(`"font-size": "%d"`, size0)) {
		t.Errorf("the dialog, the value already put back: %q", text)
	}
	if force, closeLabel := b.Text("#wpsidecar-revert-force"), b.Text("#wpsidecar-revert-cancel"); force != "Write it back anyway" || closeLabel != "Close" {
		t.Errorf("the dialog, nothing to revert, offers %q and %q", force, closeLabel)
	}
	b.Screenshot("08-nothing-to-revert.png")
	b.Click("#wpsidecar-revert-cancel")
	b.WaitGone("#wpsidecar-revert-dialog")
	if got := bodyFont(t, fs); !reflect.DeepEqual(got, b0) {
		t.Errorf("after nothing to revert PHP reads %v, want %v", got, b0)
	}
	b.CheckConsole()
}

// waitReady waits for the screen's list to be loaded; a list that failed
// to load fails the test at once, with the screen's error.
func waitReady(t *testing.T, b *testbrowser.Browser) {
	t.Helper()
	b.WaitTrue("the list loaded or failed", `() => document.getElementById("wpsidecar-history").getAttribute("data-state") !== "loading"`)
	if b.Attr("#wpsidecar-history", "data-state") == "error" {
		t.Fatalf("the screen says %s: %q", b.Attr("#wpsidecar-history-error", "data-code"), b.Text("#wpsidecar-history-error"))
	}
}

// entryRow is the selector of an entry's row in the screen's table.
func entryRow(id int64) string {
	return fmt.Sprintf(`#wpsidecar-history-table tr.wpsidecar-entry[data-entry-id="%d"]`, id)
}

// checkDiff opens the diff of the entry in row and checks which keys it
// marks added, removed and changed (each mark's text names its key).
func checkDiff(t *testing.T, b *testbrowser.Browser, row string, want map[string][]string) {
	t.Helper()
	button := row + " button.wpsidecar-show-diff"
	b.Click(button)
	b.WaitAttr(button, "aria-expanded", "true")
	diff := "#" + b.Attr(button, "aria-controls")
	b.WaitVisible(diff)
	for kind, keys := range want {
		marks := b.Texts(diff + " .wpsidecar-diff-" + kind)
		if len(marks) != len(keys) {
			t.Errorf("%s: %d marked %s (%q), want %v", row, len(marks), kind, marks, keys)
			continue
		}
		for i, k := range keys {
			if !strings.Contains(marks[i], k) {
				t.Errorf("%s: %s mark %q does not name %s", row, kind, marks[i], k)
			}
		}
	}
}

// updateDocs: go test -tags e2e ./e2e -run TestHistoryScreenInBrowser -update
// takes the documentation's picture of the screen again.
var updateDocs = flag.Bool("update", false, "write docs/img/history-screen.png from TestHistoryScreenInBrowser's screenshot of the list with an open diff")

// keepForDocs copies the screenshot of the list with an open diff to
// docs/img/history-screen.png, which the documentation shows.
func keepForDocs(t *testing.T, shot string) {
	t.Helper()
	png, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("../docs/img/history-screen.png", png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// restSave saves the body font through the theme options' REST route
// with the administrator's application password, with client.
func restSave(t *testing.T, fs *wptest.Site, client *http.Client, v typography) {
	t.Helper()
	admin := fs.Users["administrator"]
	body, _ := json.Marshal(map[string]any{"body_font": v})
	req, _ := http.NewRequest(http.MethodPost, fs.URL+"/wp-json/themeopts/v1/options", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", wptest.BasicAuth(admin.Login, admin.ApplicationPassword))
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, _ := io.ReadAll(resp.Body); resp.StatusCode != 200 {
		t.Fatalf("saving the body font: %d %s", resp.StatusCode, b)
	}
}

// setBodyFont changes the body font as a plugin would: PHP's
// update_option, outside the sidecar.
func setBodyFont(t *testing.T, fs *wptest.Site, v typography) {
	t.Helper()
	j, _ := json.Marshal(v)
	fs.PHP(t, `$o = get_option("themeopts_options"); $o["body_font"] = json_decode(`+phpString(string(j))+`, true);
		update_option("themeopts_options", $o); return "ok";`, nil)
}

// bodyFont is the body font as PHP's get_option reads it.
func bodyFont(t *testing.T, fs *wptest.Site) typography {
	t.Helper()
	var v typography
	fs.PHP(t, `return get_option("themeopts_options")["body_font"];`, &v)
	return v
}

// waitEntry waits for the newest body_font entry of the history to be
// via's with after, and returns its id.
func waitEntry(t *testing.T, fs *wptest.Site, via string, after typography) int64 {
	t.Helper()
	admin := fs.Users["administrator"]
	var id int64
	testwait.For(t, fmt.Sprintf("a %s entry with %v in the history", via, after), func() bool {
		var l []struct {
			ID    int64      `json:"id"`
			Via   string     `json:"via"`
			After typography `json:"after"`
		}
		a := ask(t, fs.URL, "", http.MethodGet, "/wp-json/wpsidecar/v1/history?namespace=themeopts&key=body_font&per_page=1", "", basic(admin.Login, admin.ApplicationPassword)...)
		if a.status != 200 || json.Unmarshal([]byte(a.body), &l) != nil {
			t.Fatalf("the history: %d %s", a.status, a.body)
		}
		if len(l) == 1 && l[0].Via == via && reflect.DeepEqual(l[0].After, after) {
			id = l[0].ID
		}
		return id != 0
	})
	return id
}

// historyRequests are the access lines of log (a sidecar's JSON lines) for
// the history's routes: method, path, status and who answered, a line
// each.
func historyRequests(log string) string {
	var out strings.Builder
	for _, line := range strings.Split(log, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil || m["message"] != "request" {
			continue
		}
		if p, _ := m["path"].(string); strings.HasPrefix(p, "/wp-json/wpsidecar/v1/history") {
			fmt.Fprintf(&out, "%v %v %v %v %vms\n", m["method"], p, m["status"], m["served_by"], m["duration_ms"])
		}
	}
	return out.String()
}
