//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar/internal/harness/testwait"
	"github.com/wpsidecar/wpsidecar/internal/harness/wptest"
)

var site *wptest.Site

func TestMain(m *testing.M) {
	// Every test here needs the site; under -short none runs and nothing
	// is started.
	flag.Parse()
	if testing.Short() {
		fmt.Println("e2e: needs WordPress, MariaDB and Redis; skipped under -short")
		os.Exit(0)
	}
	start := time.Now()
	var err error
	hooks = httptest.NewServer(&webhooks)
	defer hooks.Close()
	themeoptsConfig, err := filepath.Abs("../web/themeopts/testdata/config.json")
	publicRoutes, _ := filepath.Abs("testdata/public-routes.json")
	if err == nil {
		site, err = wptest.Start(wptest.Options{RedisObjectCache: true, Companion: true, Varnish: true,
			MUPlugins: []string{"scripts/wp/fieldmgr-twin.php"}, SidecarArgs: []string{"--themeopts-config", themeoptsConfig,
				"--public-routes", publicRoutes,
				"--webhook-urls", hooks.URL, "--webhook-secret", webhookSecret, "--change-interval", "100ms"}})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: cannot start WordPress behind the sidecar:", err)
		os.Exit(1)
	}
	fmt.Printf("e2e: WordPress and the sidecar up in %s\n", time.Since(start).Round(time.Millisecond))
	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "e2e: sidecar log:\n%s\n", tail(site.SidecarLog(), 40))
	}
	site.Stop()
	os.Exit(code)
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func do(t *testing.T, c *http.Client, req *http.Request) (*http.Response, string) {
	t.Helper()
	if c == nil {
		c = wptest.Client()
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

func get(t *testing.T, c *http.Client, path string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, site.URL+path, nil)
	return do(t, c, req)
}

func TestPages(t *testing.T) {
	resp, body := get(t, nil, "/")
	if resp.StatusCode != 200 || !strings.Contains(body, "<title>wpsidecar demo</title>") {
		t.Errorf("home: %d, title missing", resp.StatusCode)
	}
	if resp.Header.Get("X-Request-Id") == "" {
		t.Error("no X-Request-Id from the sidecar")
	}
	resp, body = get(t, nil, "/hello-world/")
	if resp.StatusCode != 200 || !strings.Contains(body, "Hello world!") || !strings.Contains(body, `rel="canonical" href="`+site.URL+`/hello-world/"`) {
		t.Errorf("post page: %d", resp.StatusCode)
	}
	if line := accessLog(t, resp); line["status"] != 200.0 || line["served_by"] != "php" || line["path"] != "/hello-world/" {
		t.Errorf("access log of the page: %v", line)
	}
	resp, _ = get(t, nil, "/no-such-page/")
	if resp.StatusCode != 404 {
		t.Errorf("missing page: %d, want WordPress's 404", resp.StatusCode)
	}
}

func TestLoginFlowAndDashboard(t *testing.T) {
	admin := site.Users["administrator"]
	c := site.Login(t, admin) // asserts the 302 to /wp-admin/
	var names []string
	for _, ck := range c.Jar.Cookies(mustURL(site.URL + "/wp-admin/")) {
		names = append(names, ck.Name)
	}
	got := strings.Join(names, " ")
	if !strings.Contains(got, "wordpress_logged_in_") || !strings.Contains(got, "wordpress_") {
		t.Errorf("cookies through the proxy: %s", got)
	}
	resp, body := get(t, c, "/wp-admin/")
	if resp.StatusCode != 200 || !strings.Contains(body, "<title>Dashboard") {
		t.Errorf("dashboard: %d %.200s", resp.StatusCode, body)
	}
	// A wrong password stays on the login form.
	form := strings.NewReader("log=" + admin.Login + "&pwd=wrong&testcookie=1")
	req, _ := http.NewRequest(http.MethodPost, site.URL+"/wp-login.php", form)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Cookie", "wordpress_test_cookie=WP%20Cookie%20check")
	resp, body = do(t, nil, req)
	if resp.StatusCode != 200 || !strings.Contains(body, "is incorrect") {
		t.Errorf("wrong password: %d", resp.StatusCode)
	}
	// Not logged in: wp-admin redirects to the login form.
	resp, _ = get(t, nil, "/wp-admin/")
	if resp.StatusCode != 302 || !strings.HasPrefix(resp.Header.Get("Location"), site.URL+"/wp-login.php?redirect_to=") {
		t.Errorf("anonymous wp-admin: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}

func TestRESTThroughTheSidecar(t *testing.T) {
	resp, body := get(t, nil, "/wp-json/wp/v2/posts?per_page=2&_fields=id,title")
	var posts []struct {
		ID    int `json:"id"`
		Title struct {
			Rendered string `json:"rendered"`
		} `json:"title"`
	}
	if err := json.Unmarshal([]byte(body), &posts); err != nil || resp.StatusCode != 200 || len(posts) != 2 {
		t.Fatalf("posts: %d %v %.200s", resp.StatusCode, err, body)
	}
	if resp.Header.Get("X-WP-Total") == "" || resp.Header.Get("Content-Type") != "application/json; charset=UTF-8" {
		t.Errorf("REST headers: %v", resp.Header)
	}
	// The ?rest_route= form reaches the same API.
	resp2, body2 := get(t, nil, "/?rest_route=/wp/v2/posts&per_page=2&_fields=id,title")
	if resp2.StatusCode != 200 || body2 != body {
		t.Errorf("rest_route: %d, differs from /wp-json: %.200s", resp2.StatusCode, body2)
	}
	// WordPress's own 404 for an unknown route comes through unchanged.
	resp, body = get(t, nil, "/wp-json/wp/v2/nope")
	if resp.StatusCode != 404 || !strings.Contains(body, `"code":"rest_no_route"`) {
		t.Errorf("unknown route: %d %s", resp.StatusCode, body)
	}
}

func TestRESTWithCookieAndNonce(t *testing.T) {
	c := site.Login(t, site.Users["editor"])
	nonce := site.RESTNonce(t, c)
	req, _ := http.NewRequest(http.MethodGet, site.URL+"/wp-json/wp/v2/users/me?_fields=id,slug", nil)
	req.Header.Set("X-WP-Nonce", nonce)
	resp, body := do(t, c, req)
	want := fmt.Sprintf(`{"id":%d,"slug":"%s"}`, site.Users["editor"].ID, site.Users["editor"].Login)
	if resp.StatusCode != 200 || body != want {
		t.Errorf("users/me with cookie and nonce: %d %s, want %s", resp.StatusCode, body, want)
	}
}

func TestMediaUploadWithApplicationPassword(t *testing.T) {
	author := site.Users["author"]
	png := tinyPNG()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("file", "pixel.png")
	fw.Write(png)
	mw.Close()
	req, _ := http.NewRequest(http.MethodPost, site.URL+"/wp-json/wp/v2/media", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", wptest.BasicAuth(author.Login, author.ApplicationPassword))
	resp, body := do(t, nil, req)
	var media struct {
		ID        int    `json:"id"`
		SourceURL string `json:"source_url"`
		Author    int64  `json:"author"`
		MimeType  string `json:"mime_type"`
	}
	if err := json.Unmarshal([]byte(body), &media); err != nil || resp.StatusCode != 201 {
		t.Fatalf("upload: %d %v %.300s", resp.StatusCode, err, body)
	}
	if media.Author != author.ID || media.MimeType != "image/png" || !strings.HasPrefix(media.SourceURL, site.URL+"/wp-content/uploads/") {
		t.Errorf("media: %+v", media)
	}
	// The file itself comes back through the sidecar, byte for byte.
	resp, got := get(t, nil, strings.TrimPrefix(media.SourceURL, site.URL))
	if resp.StatusCode != 200 || got != string(png) {
		t.Errorf("uploaded file: %d, %d bytes", resp.StatusCode, len(got))
	}
	// Without credentials WordPress refuses, through the sidecar too.
	req, _ = http.NewRequest(http.MethodPost, site.URL+"/wp-json/wp/v2/media", bytes.NewReader(png))
	resp, body = do(t, nil, req)
	if resp.StatusCode != 401 || !strings.Contains(body, `"code":"rest_cannot_create"`) {
		t.Errorf("anonymous upload: %d %s", resp.StatusCode, body)
	}
}

// TestPlainPermalinksSendNamespacesToPHP: with plain permalinks, /wp-json/ is
// not the REST API; the sidecar intercepts nothing and WordPress answers.
func TestPlainPermalinksSendNamespacesToPHP(t *testing.T) {
	setPermalinks(t, "")
	defer setPermalinks(t, "/%postname%/")
	resp, body := get(t, nil, "/?rest_route=/wp/v2/posts&per_page=1&_fields=id")
	if resp.StatusCode != 200 || !strings.HasPrefix(body, `[{"id":`) {
		t.Errorf("rest_route under plain permalinks: %d %s", resp.StatusCode, body)
	}
	for _, path := range []string{"/wp-json/fieldmgr/v1/field-groups", "/wp-json/themeopts/v1/options"} {
		testwait.For(t, "an answer other than 503", func() bool {
			resp, _ := get(t, nil, path)
			return resp.StatusCode != 503
		})
		// Under plain permalinks /wp-json/… is an ordinary URL to WordPress:
		// its canonical redirect adds the trailing slash
		// (redirect_canonical).
		resp, body := get(t, nil, path)
		if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != site.URL+path+"/" || resp.Header.Get("X-Redirect-By") != "WordPress" {
			t.Errorf("%s under plain permalinks: %d %q %.100s", path, resp.StatusCode, resp.Header.Get("Location"), body)
		}
		if line := accessLog(t, resp); line["status"] != 301.0 || line["served_by"] != "php" || line["path"] != path {
			t.Errorf("%s: access log %v, want 301 served by php", path, line)
		}
	}
	// ?rest_route= is the REST API under plain permalinks: the sidecar
	// answers it, as WordPress answers its own routes there.
	ours := sameAsWordPress(t, http.MethodGet, "/?rest_route=/{ns}/field-groups&_fields=id", "", adminBasic()...)
	if ours.status != 200 {
		t.Errorf("?rest_route= under plain permalinks: %d %s", ours.status, ours.body)
	}
}

func setPermalinks(t *testing.T, structure string) {
	t.Helper()
	site.PHP(t, fmt.Sprintf(`global $wp_rewrite; $wp_rewrite->set_permalink_structure(%q); $wp_rewrite->flush_rules(false); return get_option("permalink_structure");`, structure), nil)
	// The sidecar has read the setting again once a namespace's route is
	// WordPress's redirect under plain permalinks, and not under others.
	testwait.For(t, fmt.Sprintf("the sidecar following the permalink structure %q", structure), func() bool {
		resp, _ := get(t, nil, "/wp-json/fieldmgr/v1/field-groups")
		return (resp.StatusCode == http.StatusMovedPermanently) == (structure == "")
	})
}

// accessLog waits for the sidecar's (batched) access log to show the
// request that got resp, found by its X-Request-Id, and returns that line.
func accessLog(t *testing.T, resp *http.Response) map[string]any {
	t.Helper()
	id := resp.Header.Get("X-Request-Id")
	if id == "" {
		t.Fatal("response without X-Request-Id")
	}
	var found map[string]any
	testwait.For(t, "the request in the access log", func() bool {
		for _, l := range strings.Split(site.SidecarLog(), "\n") {
			m := map[string]any{}
			if json.Unmarshal([]byte(l), &m) == nil && m["message"] == "request" && m["request_id"] == id {
				found = m
			}
		}
		return found != nil
	})
	return found
}

func mustURL(s string) *url.URL { u, _ := url.Parse(s); return u }

// tinyPNG is a valid 1×1 PNG.
func tinyPNG() []byte {
	return []byte{
		0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
		0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
		0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0xf0,
		0x1f, 0x00, 0x05, 0x00, 0x01, 0xff, 0x89, 0x99, 0x3d, 0x1d, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
		0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
	}
}

// TestHarnessUsers checks what the harness promises the later suites: one
// user per role, a direct grant and a direct denial, and a working
// application password for each.
func TestHarnessUsers(t *testing.T) {
	want := map[string]struct {
		role             string
		manageOptions    bool
		editThemeOptions bool
	}{
		"administrator": {"administrator", true, true},
		"editor":        {"editor", false, false},
		"author":        {"author", false, false},
		"subscriber":    {"subscriber", false, false},
		"granted":       {"subscriber", true, true},
		"denied":        {"administrator", false, false},
	}
	for name, w := range want {
		u, ok := site.Users[name]
		if !ok {
			t.Errorf("no %s user", name)
			continue
		}
		var got struct {
			Roles            []string `json:"roles"`
			ManageOptions    bool     `json:"manage_options"`
			EditThemeOptions bool     `json:"edit_theme_options"`
		}
		site.PHP(t, fmt.Sprintf(`$u = get_user_by("id", %d); return array("roles" => $u->roles, "manage_options" => user_can($u, "manage_options"), "edit_theme_options" => user_can($u, "edit_theme_options"));`, u.ID), &got)
		if len(got.Roles) != 1 || got.Roles[0] != w.role || got.ManageOptions != w.manageOptions || got.EditThemeOptions != w.editThemeOptions {
			t.Errorf("%s: PHP sees %+v, want %+v", name, got, w)
		}
		req, _ := http.NewRequest(http.MethodGet, site.URL+"/wp-json/wp/v2/users/me?_fields=id", nil)
		req.Header.Set("Authorization", wptest.BasicAuth(u.Login, u.ApplicationPassword))
		resp, body := do(t, nil, req)
		if resp.StatusCode != 200 || body != fmt.Sprintf(`{"id":%d}`, u.ID) {
			t.Errorf("%s: application password through the sidecar: %d %s", name, resp.StatusCode, body)
		}
	}
}

// TestPHPOptionRoundTrip: what PHP writes with update_option, PHP reads back
// and the site shows through the sidecar at once.
func TestPHPOptionRoundTrip(t *testing.T) {
	const tagline = "Ünïcode tagline 🎉 with a \\ backslash" // sanitize_option (esc_html) keeps these as they are
	var old string
	site.PHP(t, `return get_option("blogdescription");`, &old)
	defer site.PHP(t, fmt.Sprintf(`return update_option("blogdescription", %q);`, old), nil)
	var ok bool
	site.PHP(t, fmt.Sprintf(`return update_option("blogdescription", %s);`, phpString(tagline)), &ok)
	if !ok {
		t.Fatal("update_option returned false")
	}
	var got string
	site.PHP(t, `return get_option("blogdescription");`, &got)
	if got != tagline {
		t.Errorf("get_option = %q, want %q", got, tagline)
	}
	var stored string
	if err := site.DB(t).QueryRow("SELECT option_value FROM wp_options WHERE option_name = 'blogdescription'").Scan(&stored); err != nil || stored != tagline {
		t.Errorf("row = %q, %v", stored, err)
	}
	_, body := get(t, nil, "/wp-json/?_fields=description")
	var index struct {
		Description string `json:"description"`
	}
	if err := json.Unmarshal([]byte(body), &index); err != nil || index.Description != tagline {
		t.Errorf("site description through the sidecar: %s", body)
	}
}

// phpString quotes s as a PHP single-quoted literal.
func phpString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
