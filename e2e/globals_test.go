//go:build e2e

package e2e

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/wpsidecar/wpsidecar/internal/phpserial"
)

// answer is what the tests compare of a REST answer.
type answer struct {
	status              int
	ctype, allow, nonce string
	body                string
}

// ask sends a request to base+target, {ns} standing for the namespace.
func ask(t *testing.T, base, ns, method, target, body string, hdr ...string) answer {
	t.Helper()
	a, _ := askCache(t, base, ns, method, target, body, hdr...)
	return a
}

// askCache is ask, and the answer's no-cache headers (Cache-Control,
// Expires), which WordPress sends by its version and by who asks.
func askCache(t *testing.T, base, ns, method, target, body string, hdr ...string) (answer, string) {
	t.Helper()
	var r *strings.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	url := base + strings.ReplaceAll(target, "{ns}", ns)
	var req *http.Request
	if r != nil {
		req, _ = http.NewRequest(method, url, r)
	} else {
		req, _ = http.NewRequest(method, url, nil)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, b := do(t, nil, req)
	cache := strings.Join(resp.Header.Values("Cache-Control"), "; ") + " | " + resp.Header.Get("Expires")
	return answer{resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Allow"), resp.Header.Get("X-WP-Nonce"), b}, cache
}

// sameAsWordPress sends the same request to the sidecar's fieldmgr/v1 and
// to WordPress's own REST server serving the twin of those routes
// (scripts/wp/fieldmgr-twin.php), and compares the answers, their
// no-cache headers included (those of a request with an Authorization
// header, always a valid one here, as a logged-in user's: noCacheFor).
func sameAsWordPress(t *testing.T, method, target, body string, hdr ...string) answer {
	t.Helper()
	ours, ourCache := askCache(t, site.URL, "fieldmgr/v1", method, target, body, hdr...)
	wp, wpCache := askCache(t, site.WPURL, "twin/v1", method, target, body, hdr...)
	loggedIn := false
	for i := 0; i+1 < len(hdr); i += 2 {
		loggedIn = loggedIn || hdr[i] == "Authorization"
	}
	cc, expires, _ := strings.Cut(wpCache, " | ")
	wpCache = noCacheFor(cc, loggedIn) + " | " + expires
	if ours.status != wp.status || ours.ctype != wp.ctype || ourCache != wpCache || !sameBody(ours.body, wp.body) {
		t.Errorf("%s %s:\n sidecar   %d %s [%s] %s\n WordPress %d %s [%s] %s", method, target, ours.status, ours.ctype, ourCache, ours.body, wp.status, wp.ctype, wpCache, wp.body)
	}
	return ours
}

// sameBody compares bodies as the contract does: the same JSON, key order
// included, escapes aside (see sameJSON), in the same JSONP wrapper, laid
// out alike (pretty or not).
func sameBody(a, b string) bool {
	if a == b {
		return true
	}
	canon := func(s string) (string, string) {
		wrap := ""
		if i := strings.IndexByte(s, '('); strings.HasPrefix(s, "/**/") && i > 0 && strings.HasSuffix(s, ")") {
			wrap, s = s[:i], s[i+1:len(s)-1]
		}
		v, err := phpserial.FromJSON([]byte(s))
		if err != nil {
			return "", "not JSON"
		}
		return wrap + fmt.Sprint(strings.Count(s, "\n")), string(phpserial.JSON(v))
	}
	wa, ca := canon(a)
	wb, cb := canon(b)
	return wa == wb && ca == cb
}

func adminBasic() []string {
	a := site.Users["administrator"]
	return []string{"Authorization", "Basic " + base64.StdEncoding.EncodeToString([]byte(a.Login+":"+a.ApplicationPassword))}
}

func seedGroup(t *testing.T, key string) {
	t.Helper()
	a := ask(t, site.URL, "fieldmgr/v1", http.MethodPost, "/wp-json/{ns}/field-groups",
		`{"group_key":"`+key+`","title":"Colors","config":{"type":"post","post_type":"page","fields":{"hue":{"type":"text","label":"Hue","maxlength":7}}}}`,
		append(adminBasic(), "Content-Type", "application/json")...)
	if a.status != 201 {
		t.Fatalf("seed %s: %d %s", key, a.status, a.body)
	}
	t.Cleanup(func() { site.DB(t).Exec("DELETE FROM wp_fieldmgr_groups WHERE group_key = ?", key) })
}

// TestGlobalParametersAsWordPress: every global parameter of WordPress's
// REST server, on the sidecar's routes and on the same routes served by
// WordPress, answered alike.
func TestGlobalParametersAsWordPress(t *testing.T) {
	seedGroup(t, "twin_colors")
	admin := adminBasic()
	for _, target := range []string{
		"/wp-json/{ns}/field-groups/twin_colors",
		"/wp-json/{ns}/field-groups/twin_colors?_fields=id,config.fields.hue.label",
		"/wp-json/{ns}/field-groups/twin_colors?_fields=nothing",
		"/wp-json/{ns}/field-groups/twin_colors?_fields[]=status&_fields[]=title",
		"/wp-json/{ns}/field-groups?_fields=title,config.post_type",
		"/wp-json/{ns}/field-groups/twin_colors?_pretty",
		"/wp-json/{ns}/field-groups/twin_colors?_jsonp=cb.x_1",
		"/wp-json/{ns}/field-groups/twin_colors?_jsonp=alert(1)",
		"/wp-json/{ns}/field-groups/twin_colors?_jsonp=",
		"/wp-json/{ns}/field-groups/missing",
		"/wp-json/{NS}/FIELD-GROUPS/twin_colors",
		"/?rest_route=/{ns}/field-groups/twin_colors&_fields=title",
		"/index.php?rest_route=/{ns}/field-groups&_fields=id",
	} {
		target = strings.ReplaceAll(target, "{NS}", "{ns}") // the namespace as given; its case is tested below
		sameAsWordPress(t, http.MethodGet, target, "", admin...)
	}
	// Case: WordPress matches routes without regard to case.
	ours := ask(t, site.URL, "FIELDMGR/V1", http.MethodGet, "/wp-json/{ns}/Field-Groups/twin_colors?_fields=id", "", admin...)
	wp := ask(t, site.WPURL, "TWIN/V1", http.MethodGet, "/wp-json/{ns}/Field-Groups/twin_colors?_fields=id", "", admin...)
	if ours.status != 200 || ours.body != wp.body {
		t.Errorf("mixed case: sidecar %d %s, WordPress %d %s", ours.status, ours.body, wp.status, wp.body)
	}

	// An envelope: the same body and status inside; the route's headers
	// inside too (the sidecar's own ETag and cache tags besides Allow).
	ours = ask(t, site.URL, "fieldmgr/v1", http.MethodGet, "/wp-json/{ns}/field-groups/twin_colors?_envelope&_fields=status&_pretty&_jsonp=cb", "", admin...)
	wp = ask(t, site.WPURL, "twin/v1", http.MethodGet, "/wp-json/{ns}/field-groups/twin_colors?_envelope&_fields=status&_pretty&_jsonp=cb", "", admin...)
	const wantWP = "/**/cb({\n    \"body\": {\n        \"status\": \"active\"\n    },\n    \"status\": 200,\n    \"headers\": {\n        \"Allow\": \"GET, PUT, DELETE\"\n    }\n})"
	ourHead, _, _ := strings.Cut(ours.body, `"headers": {`)
	wpHead, _, _ := strings.Cut(wp.body, `"headers": {`)
	if wp.body != wantWP || ours.status != 200 || ours.ctype != wp.ctype || ourHead != wpHead ||
		!strings.HasSuffix(ours.body, "\n        \"Allow\": \"GET, PUT, DELETE\"\n    }\n})") || !strings.Contains(ours.body, `"ETag": "\"`) {
		t.Errorf("envelope:\n sidecar   %s\n WordPress %s", ours.body, wp.body)
	}

	// Errors: anonymous, enveloped; an invalid JSONP callback before anything.
	sameAsWordPress(t, http.MethodGet, "/wp-json/{ns}/field-groups?_envelope", "")
	sameAsWordPress(t, http.MethodGet, "/wp-json/{ns}/field-groups?_jsonp=a-b", "")
	// A body PHP cannot decode, anonymous or not: before the permission check.
	for _, who := range [][]string{nil, admin} {
		sameAsWordPress(t, http.MethodPost, "/wp-json/{ns}/field-groups", "{\"title\":\"a\xff\xfe\xc3\x28b\"}", append(who, "Content-Type", "application/json")...)
		sameAsWordPress(t, http.MethodPost, "/wp-json/{ns}/field-groups", `{"title":`, append(who, "Content-Type", "application/json; charset=utf-8")...)
	}

	// ?rest_route= naming another route wins over the path: WordPress's
	// answer, passed through unchanged.
	ours = ask(t, site.URL, "fieldmgr/v1", http.MethodGet, "/wp-json/{ns}/field-groups?rest_route=/wp/v2/users/me", "", admin...)
	wp = ask(t, site.WPURL, "fieldmgr/v1", http.MethodGet, "/wp-json/{ns}/field-groups?rest_route=/wp/v2/users/me", "", admin...)
	if ours.status != 200 || ours.body != wp.body || !strings.Contains(ours.body, `"name":"e2e_administrator"`) {
		t.Errorf("rest_route wins: sidecar %d %.80s, WordPress %d %.80s", ours.status, ours.body, wp.status, wp.body)
	}

	// _method and X-HTTP-Method-Override: a POST read as GET lists and
	// writes nothing; a GET read as DELETE deletes (twice: once each).
	sameAsWordPress(t, http.MethodPost, "/wp-json/{ns}/field-groups?_fields=id", "", append(admin, "X-HTTP-Method-Override", "GET")...)
	seedGroup(t, "twin_gone")
	ours = ask(t, site.URL, "fieldmgr/v1", http.MethodGet, "/wp-json/{ns}/field-groups/twin_gone?_method=DELETE", "", admin...)
	seedGroup(t, "twin_gone")
	wp = ask(t, site.WPURL, "twin/v1", http.MethodGet, "/wp-json/{ns}/field-groups/twin_gone?_method=DELETE", "", admin...)
	if ours.status != 200 || ours.body != wp.body || ours.body != `{"success":true,"message":"Field group deleted"}` {
		t.Errorf("_method=DELETE: sidecar %d %s, WordPress %d %s", ours.status, ours.body, wp.status, wp.body)
	}
}

// TestNonceAsWordPress: a fresh X-WP-Nonce comes back wherever WordPress
// sends one — on a rest_forbidden too — and _wpnonce counts from a POST
// form body.
func TestNonceAsWordPress(t *testing.T) {
	seedGroup(t, "twin_nonce")
	sub := site.Users["subscriber"]
	c := site.Login(t, sub)
	nonce := site.RESTNonce(t, c)
	for name, base := range map[string]string{"sidecar": site.URL, "WordPress": site.WPURL} {
		ns := "fieldmgr/v1"
		if name == "WordPress" {
			ns = "twin/v1"
		}
		req, _ := http.NewRequest(http.MethodGet, base+"/wp-json/"+ns+"/field-groups", nil)
		req.Header.Set("X-WP-Nonce", nonce)
		resp, body := do(t, c, req)
		if resp.StatusCode != 403 || !strings.Contains(body, `"code":"rest_forbidden"`) || resp.Header.Get("X-WP-Nonce") == "" {
			t.Errorf("%s: subscriber with cookie and nonce: %d %s, X-WP-Nonce %q", name, resp.StatusCode, body, resp.Header.Get("X-WP-Nonce"))
		}
	}
	admin := site.Users["administrator"]
	ac := site.Login(t, admin)
	req, _ := http.NewRequest(http.MethodPost, site.URL+"/wp-json/fieldmgr/v1/field-groups/twin_nonce/toggle",
		strings.NewReader("_wpnonce="+site.RESTNonce(t, ac)))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if resp, body := do(t, ac, req); resp.StatusCode != 200 || body != `{"success":true,"status":"inactive","message":"Field group deactivated"}` {
		t.Errorf("_wpnonce in a form body: %d %s", resp.StatusCode, body)
	}
}

// TestStrictInputAsWordPress: what PHP refuses, the sidecar refuses.
func TestStrictInputAsWordPress(t *testing.T) {
	admin := site.Users["administrator"]
	// A NUL in Basic credentials ends them, in PHP: the application
	// password with bytes after a NUL is refused by both.
	cut := admin.ApplicationPassword[:4] + "\x00" + admin.ApplicationPassword[4:]
	hdr := []string{"Authorization", "Basic " + base64.StdEncoding.EncodeToString([]byte(admin.Login+":"+cut))}
	ours := ask(t, site.URL, "fieldmgr/v1", http.MethodGet, "/wp-json/{ns}/field-groups", "", hdr...)
	wp := ask(t, site.WPURL, "twin/v1", http.MethodGet, "/wp-json/{ns}/field-groups", "", hdr...)
	if ours.status != 401 || wp.status != 401 {
		t.Errorf("NUL in the password: sidecar %d %s, WordPress %d %s", ours.status, ours.body, wp.status, wp.body)
	}
	// A number beyond a PHP float: refused with its path, nothing written
	// (stored, it would make WordPress's own answer fail with
	// rest_encode_error).
	a := ask(t, site.URL, "fieldmgr/v1", http.MethodPost, "/wp-json/{ns}/field-groups",
		`{"group_key":"twin_inf","title":"T","config":{"type":"user","fields":{"n":{"type":"number","label":"N","max":1e400}}}}`,
		append(adminBasic(), "Content-Type", "application/json")...)
	var n int
	site.DB(t).QueryRow("SELECT COUNT(*) FROM wp_fieldmgr_groups WHERE group_key = 'twin_inf'").Scan(&n)
	if a.status != 400 || a.body != `{"error":"config.fields.n.max: number beyond what a PHP float holds"}` || n != 0 {
		t.Errorf("1e400: %d %s, %d rows", a.status, a.body, n)
	}
	site.PHP(t, `global $wpdb; $wpdb->insert($wpdb->prefix."fieldmgr_groups", array("group_key"=>"twin_inf","title"=>"T","config"=>"{\"type\":\"user\",\"max\":1e400}","status"=>"active","created_at"=>"2026-01-01 00:00:00","updated_at"=>"2026-01-01 00:00:00")); return true;`, nil)
	defer site.DB(t).Exec("DELETE FROM wp_fieldmgr_groups WHERE group_key = 'twin_inf'")
	if wp := ask(t, site.WPURL, "twin/v1", http.MethodGet, "/wp-json/{ns}/field-groups/twin_inf", "", adminBasic()...); wp.status != 500 || !strings.Contains(wp.body, `"code":"rest_encode_error"`) {
		t.Errorf("WordPress with INF stored: %d %s", wp.status, wp.body)
	}
}
