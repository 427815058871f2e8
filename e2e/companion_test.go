//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar/changes/delivery"
	"github.com/wpsidecar/wpsidecar/internal/harness/testwait"
	"github.com/wpsidecar/wpsidecar/internal/harness/wptest"
)

// switchPolicy sets one of companion-test.php's switches through PHP,
// publishes the companion's policy, and waits until a sidecar request
// answers as want says; the switch is undone when the test ends, and the
// site waits for that too.
func switchPolicy(t *testing.T, option, value string, settled func() bool) {
	t.Helper()
	set := func(v string) {
		// Two requests: the switch's filter is added as WordPress loads.
		site.PHP(t, phpSet(option, v)+"; return true;", nil)
		site.PHP(t, `return wpsidecar_companion_publish();`, nil)
	}
	set(value)
	testwait.For(t, "the companion settled", settled)
	t.Cleanup(func() {
		set("")
		admin := site.Users["administrator"]
		testwait.For(t, "the sidecar serving again", func() bool {
			code, _ := sidecarGet(t, "/wp-json/fieldmgr/v1/field-groups", admin.Login, admin.ApplicationPassword)
			return code == 200
		})
	})
}

func phpSet(option, value string) string {
	if value == "" {
		return fmt.Sprintf(`delete_option(%q)`, option)
	}
	return fmt.Sprintf(`update_option(%q, %q)`, option, value)
}

func sidecarGet(t *testing.T, path, login, password string) (int, string) {
	return basicGet(t, site.URL+path, login, password)
}

func basicGet(t *testing.T, url, login, password string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if login != "" {
		req.Header.Set("Authorization", wptest.BasicAuth(login, password))
	}
	resp, body := do(t, nil, req)
	return resp.StatusCode, body
}

// TestCompanion_ApplicationPasswordsOffByFilter: a site whose filter turns
// application passwords off is obeyed: the sidecar ignores the header, as
// WordPress does on its own routes.
func TestCompanion_ApplicationPasswordsOffByFilter(t *testing.T) {
	admin := site.Users["administrator"]
	switchPolicy(t, "wpsidecar_test_app_passwords_off", "1", func() bool {
		code, _ := sidecarGet(t, "/wp-json/fieldmgr/v1/field-groups", admin.Login, admin.ApplicationPassword)
		return code == 401
	})
	code, body := sidecarGet(t, "/wp-json/fieldmgr/v1/field-groups", admin.Login, admin.ApplicationPassword)
	if code != 401 || body != errBody("rest_forbidden", "Sorry, you are not allowed to do that.", 401) {
		t.Errorf("sidecar: %d %s", code, body)
	}
	// WordPress's own route with the same header: not logged in.
	if code, body := basicGet(t, site.WPURL+"/wp-json/wp/v2/users/me", admin.Login, admin.ApplicationPassword); code != 401 || !strings.Contains(body, `"code":"rest_not_logged_in"`) {
		t.Errorf("WordPress: %d %s", code, body)
	}
}

// TestCompanion_ApplicationPasswordsOffForOneUser: a filter that refuses one
// user's application passwords gives that user WordPress's own error code,
// through the sidecar as from PHP; other users are not touched.
func TestCompanion_ApplicationPasswordsOffForOneUser(t *testing.T) {
	admin, granted := site.Users["administrator"], site.Users["granted"]
	switchPolicy(t, "wpsidecar_test_app_passwords_off_for", admin.Login, func() bool {
		code, _ := sidecarGet(t, "/wp-json/fieldmgr/v1/field-groups", admin.Login, admin.ApplicationPassword)
		return code == 401
	})
	// WordPress refuses the password too (6.1 answers as if none was
	// given); the sidecar names WordPress's reason, as it does for every
	// refused credential (docs/api.md §1).
	phpCode, phpBody := basicGet(t, site.WPURL+"/wp-json/wp/v2/users/me", admin.Login, admin.ApplicationPassword)
	code, body := sidecarGet(t, "/wp-json/fieldmgr/v1/field-groups", admin.Login, admin.ApplicationPassword)
	const msg = "Application Passwords are not available for your account. Please contact the site administrator for assistance."
	if code != 401 || body != errBody("application_passwords_disabled_for_user", msg, 401) || phpCode != 401 {
		t.Errorf("sidecar: %d %s; WordPress: %d %s", code, body, phpCode, phpBody)
	}
	if code, body := sidecarGet(t, "/wp-json/fieldmgr/v1/field-groups", granted.Login, granted.ApplicationPassword); code != 200 {
		t.Errorf("another user: %d %s", code, body)
	}
}

// TestCompanion_RESTClosedToAnonymousUsers: a plugin that closes the REST
// API to visitors answers anonymous requests to the sidecar's routes with
// its own error, exactly as WordPress's routes answer them; signed-in users
// are not affected.
func TestCompanion_RESTClosedToAnonymousUsers(t *testing.T) {
	admin := site.Users["administrator"]
	switchPolicy(t, "wpsidecar_test_rest_closed", "1", func() bool {
		_, body := sidecarGet(t, "/wp-json/fieldmgr/v1/field-groups", "", "")
		return strings.Contains(body, "rest_not_logged_in")
	})
	_, phpBody := basicGet(t, site.WPURL+"/wp-json/wp/v2/posts", "", "")
	for _, path := range []string{"/wp-json/fieldmgr/v1/field-groups", "/wp-json/themeopts/v1/options"} {
		code, body := sidecarGet(t, path, "", "")
		if code != 401 || body != phpBody || body != errBody("rest_not_logged_in", "You are not currently logged in.", 401) {
			t.Errorf("%s: %d %s; WordPress's own route: %s", path, code, body, phpBody)
		}
	}
	if code, body := sidecarGet(t, "/wp-json/fieldmgr/v1/field-groups", admin.Login, admin.ApplicationPassword); code != 200 {
		t.Errorf("administrator: %d %s", code, body)
	}
}

// TestCompanion_FailedAttemptsReachLockoutPlugins: a wrong application
// password refused by the sidecar makes WordPress fire
// application_password_failed_authentication with the client's address,
// as it would had PHP refused it; a report without the right signature
// fires nothing.
func TestCompanion_FailedAttemptsReachLockoutPlugins(t *testing.T) {
	site.PHP(t, `delete_option("wpsidecar_test_failures"); return true;`, nil)
	admin := site.Users["administrator"]
	if code, _ := sidecarGet(t, "/wp-json/fieldmgr/v1/field-groups", admin.Login, "wrong wrong wrong"); code != 401 {
		t.Fatalf("wrong password: %d", code)
	}
	type fired struct{ Action, Login, IP, Code string }
	var got []fired
	testwait.For(t, "the companion's actions fired", func() bool {
		got = nil
		site.PHP(t, `return get_option("wpsidecar_test_failures", array());`, &got)
		return len(got) > 0
	})
	if len(got) != 1 || got[0] != (fired{"application_password_failed_authentication", "", "127.0.0.1", "incorrect_password"}) {
		t.Errorf("fired: %+v", got)
	}

	// Forged reports: no signature, a wrong one, an old one.
	body := `{"login":"admin","ip":"192.0.2.9","kind":"password","code":"incorrect_password","message":""}`
	now := time.Now().Unix()
	for _, sig := range []struct {
		ts  int64
		key string
	}{{0, ""}, {now, "not the secret"}, {now - 3600, site.CompanionSecret}} {
		req, _ := http.NewRequest(http.MethodPost, site.WPURL+"/?rest_route=/wpsidecar-companion/v1/failed-auth", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if sig.ts != 0 {
			req.Header.Set(delivery.HeaderTimestamp, strconv.FormatInt(sig.ts, 10))
			req.Header.Set(delivery.HeaderSignature, delivery.Sign(sig.key, sig.ts, []byte(body)))
		}
		if resp, b := do(t, nil, req); resp.StatusCode != 401 {
			t.Errorf("forged report (%+v): %d %s", sig.ts, resp.StatusCode, b)
		}
	}
	// The same report, signed: WordPress fires wp_login_failed for it.
	req, _ := http.NewRequest(http.MethodPost, site.WPURL+"/?rest_route=/wpsidecar-companion/v1/failed-auth", strings.NewReader(body))
	req.Header.Set(delivery.HeaderTimestamp, strconv.FormatInt(now, 10))
	req.Header.Set(delivery.HeaderSignature, delivery.Sign(site.CompanionSecret, now, []byte(body)))
	if resp, b := do(t, nil, req); resp.StatusCode != 200 || b != `{"fired":"password"}` {
		t.Errorf("signed report: %d %s", resp.StatusCode, b)
	}
	got = nil
	site.PHP(t, `return get_option("wpsidecar_test_failures", array());`, &got)
	if len(got) != 2 || got[1] != (fired{"wp_login_failed", "admin", "192.0.2.9", "incorrect_password"}) {
		t.Errorf("fired: %+v", got)
	}
}
