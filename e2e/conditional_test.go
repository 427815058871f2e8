//go:build e2e

package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/wpsidecar/wpsidecar/internal/harness/wptest"
)

const preconditionFailed = `{"code":"wpsidecar_precondition_failed","message":"The resource has changed since it was read (If-Match does not match its current ETag); read it again and retry.","data":{"status":412}}`

// conditional sends an authenticated request through the sidecar with one
// extra header.
func conditional(t *testing.T, method, path, body, header, value string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, site.URL+path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	admin := site.Users["administrator"]
	req.Header.Set("Authorization", wptest.BasicAuth(admin.Login, admin.ApplicationPassword))
	if header != "" {
		req.Header.Set(header, value)
	}
	return do(t, nil, req)
}

// TestConditional_PHPWrites: the ETag follows what PHP stores — kept by a
// write that stores the same bytes, moved by one that changes them — and a
// write whose If-Match PHP made stale is refused with nothing written.
func TestConditional_PHPWrites(t *testing.T) {
	const path = themeoptsURL + "/options"
	site.PHP(t, `update_option('themeopts_options', array('tagline' => 'from PHP', 'columns' => 2)); return true;`, nil)
	resp, _ := conditional(t, http.MethodGet, path, "", "", "")
	tag := resp.Header.Get("ETag")
	if resp.StatusCode != 200 || tag == "" {
		t.Fatalf("GET: %d, ETag %q", resp.StatusCode, tag)
	}
	resp, body := conditional(t, http.MethodGet, path, "", "If-None-Match", tag)
	// The no-cache set WordPress's REST server sends this user, on this
	// version (6.1: without no-store, private; 6.3 and later: with them),
	// but never without them (noCacheFor).
	admin := site.Users["administrator"]
	req, _ := http.NewRequest(http.MethodGet, site.WPURL+"/wp-json/wp/v2/users/me", nil)
	req.Header.Set("Authorization", wptest.BasicAuth(admin.Login, admin.ApplicationPassword))
	wp, _ := do(t, nil, req)
	if resp.StatusCode != 304 || body != "" || resp.Header.Get("ETag") != tag || resp.Header.Get("Vary") != "Origin, Authorization, Cookie, Accept-Encoding" ||
		wp.StatusCode != 200 || resp.Header.Get("Cache-Control") != noCacheFor(wp.Header.Get("Cache-Control"), true) || resp.Header.Get("Expires") != wp.Header.Get("Expires") {
		t.Errorf("revalidation: %d %q %v (WordPress's Cache-Control %q)", resp.StatusCode, body, resp.Header, wp.Header.Get("Cache-Control"))
	}

	// update_option with the value already stored writes nothing.
	site.PHP(t, `update_option('themeopts_options', array('tagline' => 'from PHP', 'columns' => 2)); return true;`, nil)
	if resp, _ := conditional(t, http.MethodGet, path, "", "If-None-Match", tag); resp.StatusCode != 304 {
		t.Errorf("after PHP stored the same value: %d, want 304", resp.StatusCode)
	}

	site.PHP(t, `update_option('themeopts_options', array('tagline' => 'changed in PHP', 'columns' => 2)); return true;`, nil)
	resp, body = conditional(t, http.MethodGet, path, "", "If-None-Match", tag)
	if resp.StatusCode != 200 || !strings.Contains(body, `"tagline":"changed in PHP"`) || resp.Header.Get("ETag") == tag {
		t.Errorf("after PHP changed it: %d %s, ETag %q", resp.StatusCode, body, resp.Header.Get("ETag"))
	}
	resp, body = conditional(t, http.MethodPost, path, `{"columns":9}`, "If-Match", tag)
	if resp.StatusCode != 412 || body != preconditionFailed {
		t.Errorf("save against the tag PHP made stale: %d %s", resp.StatusCode, body)
	}
	var columns int
	site.PHP(t, `$v = get_option('themeopts_options'); return $v['columns'];`, &columns)
	if columns != 2 {
		t.Errorf("the 412 wrote: PHP sees columns %d", columns)
	}
}
