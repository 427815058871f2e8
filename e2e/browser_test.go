//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wpsidecar/wpsidecar/internal/testbrowser"
	"github.com/wpsidecar/wpsidecar/internal/wptest"
)

// historyPage is Tools → Change history, the companion plugin's screen.
const historyPage = "/wp-admin/tools.php?page=wpsidecar-history"

// browserLogin signs u in through wp-login.php as a person would: the
// form typed into and submitted; it returns when the dashboard shows.
// shot, when not "", is the screenshot of the filled-in form.
func browserLogin(t *testing.T, b *testbrowser.Browser, base string, u wptest.User, shot string) {
	t.Helper()
	b.Navigate(base + "/wp-login.php")
	b.WaitVisible("#user_login")
	b.Type("#user_login", u.Login)
	b.Type("#user_pass", u.Password)
	if shot != "" {
		b.Screenshot(shot)
	}
	b.Click("#wp-submit")
	b.WaitVisible("#wpadminbar")
	if loc := b.Location(); !strings.HasPrefix(loc, base+"/wp-admin/") {
		t.Fatalf("after signing in as %s the browser is at %s", u.Login, loc)
	}
}

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

// TestHistoryScreenInBrowser: Tools → Change history driven in a real
// browser (Chromium), signed in through wp-login.php.
func TestHistoryScreenInBrowser(t *testing.T) {
	fs := startFeedSiteWith(t, wptest.Options{Companion: true}, "", "")
	// The closed network has no Gravatar: wp-admin's avatars would be
	// failed requests in the browser's console.
	fs.PHP(t, `update_option("show_avatars", 0); return "ok";`, nil)
	_, logStart := phpErrors(t, fs, 0)
	b := testbrowser.Start(t, testbrowser.Options{})
	browserLogin(t, b, fs.URL, fs.Users["administrator"], "01-login.png")
	b.Navigate(fs.URL + historyPage)
	b.WaitAttr("#wpsidecar-history", "data-state", "ready")
	b.Screenshot("02-history.png")
	if errs, _ := phpErrors(t, fs, logStart); errs != "" {
		t.Errorf("PHP logged:\n%s", errs)
	}
}
