//go:build e2e

package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/wpsidecar/wpsidecar/internal/harness/testwait"
	"github.com/wpsidecar/wpsidecar/internal/harness/wptest"
)

// TestMultisite: a real WordPress network, subdirectory and subdomain, with
// three sites, users in some sites and not others and a super admin; each
// site with field groups and theme options of its own (site three with a
// configuration of its own). Every route on every site, as every user, is
// answered by the sidecar as WordPress answers it for that site: the
// field-group routes compared with WordPress's own REST server (the twin
// plugin over the same table), the theme options with what PHP's
// get_option and user_can say on that site; application passwords and
// cookies with nonces alike.
func TestMultisite(t *testing.T) {
	for _, mode := range []string{"subdirectory", "subdomain"} {
		t.Run(mode, func(t *testing.T) { testNetwork(t, mode) })
	}
}

func testNetwork(t *testing.T, mode string) {
	dir := t.TempDir()
	network, err := os.ReadFile("../web/themeopts/testdata/config.json")
	if err != nil {
		t.Fatal(err)
	}
	networkConfig, site3Config := filepath.Join(dir, "network.json"), filepath.Join(dir, "site3.json")
	os.WriteFile(networkConfig, network, 0o644)
	os.WriteFile(site3Config, []byte(strings.Replace(string(network), `"opt_name": "themeopts_options"`, `"opt_name": "site3_options"`, 1)), 0o644)
	var hooks struct {
		sync.Mutex
		bodies []string
	}
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		hooks.Lock()
		hooks.bodies = append(hooks.bodies, string(b))
		hooks.Unlock()
	}))
	defer receiver.Close()
	ns, err := wptest.Start(wptest.Options{Network: mode, MUPlugins: []string{"scripts/wp/fieldmgr-twin.php"},
		SidecarArgs: []string{"--themeopts-config", networkConfig, "--themeopts-site-config", "3=" + site3Config,
			"--webhook-urls", receiver.URL, "--webhook-secret", webhookSecret, "--change-interval", "100ms"}})
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Stop()
	n := ns.Network
	type siteRef struct {
		id           int64
		host, path   string // path: "" or "/two"
		optName, tag string
	}
	sites := []siteRef{{1, n.Domain, "", "themeopts_options", "site1:"}}
	for _, name := range []string{"two", "three"} {
		s := n.Sites[name]
		sites = append(sites, siteRef{s.ID, s.Domain, strings.TrimSuffix(s.Path, "/"), "themeopts_options", fmt.Sprintf("site%d:", s.ID)})
	}
	sites[2].optName = "site3_options"

	// send asks base (the sidecar or PHP) as host, with credentials.
	send := func(base, method, host, path, body string, hdr ...string) (int, string, http.Header) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Host = host
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := wptest.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header
	}
	basic := func(user string) []string {
		u := n.Users[user]
		return []string{"Authorization", wptest.BasicAuth(u.Login, u.ApplicationPassword)}
	}

	// Each site's own data: a field group made through the sidecar (which
	// makes the site's table), theme options saved by PHP on that site.
	for i, s := range sites {
		key := fmt.Sprintf("group_of_%d", s.id)
		code, body, _ := send(ns.URL, http.MethodPost, s.host, s.path+"/wp-json/fieldmgr/v1/field-groups",
			`{"group_key":"`+key+`","title":"Site `+fmt.Sprint(s.id)+`","config":{"type":"post","post_type":"post","fields":{}}}`, basic("super")...)
		if code != 201 {
			t.Fatalf("site %d: create group: %d %s", s.id, code, body)
		}
		ns.PHP(t, fmt.Sprintf(`switch_to_blog(%d); update_option(%q, array('tagline' => 'Site %d', 'columns' => %d)); return true;`, s.id, s.optName, s.id, i+2), nil)
	}
	var table string
	if err := ns.DB(t).QueryRow("SELECT group_key FROM wp_2_fieldmgr_groups").Scan(&table); err != nil || table != "group_of_2" {
		t.Fatalf("site 2's table: %q %v", table, err)
	}

	// Each site's history (its own table) holds its own group's creation.
	for _, s := range sites {
		code, body, hdr := send(ns.URL, http.MethodGet, s.host, s.path+"/wp-json/wpsidecar/v1/history?namespace=fieldmgr", "", basic("super")...)
		if code != 200 || hdr.Get("X-WP-Total") != "1" || !strings.Contains(body, fmt.Sprintf(`"key":"group_of_%d","before":null`, s.id)) {
			t.Errorf("site %d's history: %d X-WP-Total %q %s", s.id, code, hdr.Get("X-WP-Total"), body)
		}
	}
	var entries int
	if err := ns.DB(t).QueryRow("SELECT COUNT(*) FROM wp_2_wpsidecar_history WHERE item_key = 'group_of_2'").Scan(&entries); err != nil || entries != 1 {
		t.Errorf("site 2's history table: %d %v", entries, err)
	}

	users := []string{"super", "site12admin", "site3admin", "subscriber"}
	for _, s := range sites {
		for _, user := range users {
			who := fmt.Sprintf("site %d as %s", s.id, user)
			// Field groups: the sidecar as WordPress's REST server.
			for _, route := range []string{"/field-groups", fmt.Sprintf("/field-groups/group_of_%d", s.id), "/field-groups/group_of_1"} {
				code, body, h := send(ns.URL, http.MethodGet, s.host, s.path+"/wp-json/fieldmgr/v1"+route, "", basic(user)...)
				pcode, pbody, _ := send(ns.WPURL, http.MethodGet, s.host, s.path+"/wp-json/twin/v1"+route, "", basic(user)...)
				if code != pcode {
					t.Errorf("%s GET %s: sidecar %d %s, WordPress %d %s", who, route, code, body, pcode, pbody)
					continue
				}
				sameJSON(t, who+" GET "+route, body, pbody)
				if code == 200 && !strings.HasPrefix(h.Get("Cache-Tag"), s.tag+"fieldmgr") {
					t.Errorf("%s GET %s: Cache-Tag %q does not name the site", who, route, h.Get("Cache-Tag"))
				}
			}
			// Theme options: what PHP says of this user on this site.
			var php struct {
				Can  bool   `json:"can"`
				JSON string `json:"json"`
			}
			ns.PHP(t, fmt.Sprintf(`switch_to_blog(%d); return array('can' => user_can(%d, 'edit_theme_options'), 'json' => wp_json_encode(get_option(%q)));`,
				s.id, n.Users[user].ID, s.optName), &php)
			code, body, _ := send(ns.URL, http.MethodGet, s.host, s.path+"/wp-json/themeopts/v1/options", "", basic(user)...)
			switch {
			case php.Can && code == 200:
				sameJSON(t, who+" GET /options", body, php.JSON)
			case !php.Can && code == 403 && body == `{"code":"rest_forbidden","message":"Sorry, you are not allowed to do that.","data":{"status":403}}`:
			default:
				t.Errorf("%s GET /options: %d %s (WordPress: can %v)", who, code, body, php.Can)
			}
		}
	}
	// Who may: the super admin everywhere; a user of sites 1 and 2 not on
	// site 3; site 3's administrator there only.
	for _, c := range []struct {
		site int
		user string
		want int
	}{{0, "super", 200}, {1, "super", 200}, {2, "super", 200}, {1, "site12admin", 200}, {2, "site12admin", 403}, {2, "site3admin", 200}, {0, "site3admin", 403}, {1, "subscriber", 403}} {
		s := sites[c.site]
		if code, body, _ := send(ns.URL, http.MethodGet, s.host, s.path+"/wp-json/fieldmgr/v1/field-groups", "", basic(c.user)...); code != c.want {
			t.Errorf("site %d as %s: %d %s, want %d", s.id, c.user, code, body, c.want)
		}
	}

	// Cookies: logged in once on the main site, the client's cookies and
	// nonce open the sites it is a member of, and only those.
	u := n.Users["site12admin"]
	_, _, h := send(ns.URL, http.MethodPost, n.Domain, "/wp-login.php", "log="+u.Login+"&pwd="+u.Password+"&wp-submit=Log+In&testcookie=1",
		"Content-Type", "application/x-www-form-urlencoded", "Cookie", "wordpress_test_cookie=WP%20Cookie%20check")
	var cookies []string
	for _, c := range (&http.Response{Header: h}).Cookies() {
		if c.Value != "" && c.MaxAge >= 0 {
			cookies = append(cookies, c.Name+"="+c.Value)
		}
	}
	cookie := strings.Join(cookies, "; ")
	_, nonce, _ := send(ns.URL, http.MethodGet, n.Domain, "/wp-admin/admin-ajax.php?action=rest-nonce", "", "Cookie", cookie)
	if len(nonce) != 10 {
		t.Fatalf("rest-nonce after logging in: %q (cookies %q)", nonce, cookie)
	}
	for i, want := range []int{200, 200, 403} {
		s := sites[i]
		for _, route := range []string{"/field-groups", fmt.Sprintf("/field-groups/group_of_%d", s.id)} {
			code, body, _ := send(ns.URL, http.MethodGet, s.host, s.path+"/wp-json/fieldmgr/v1"+route, "", "Cookie", cookie, "X-WP-Nonce", nonce)
			pcode, pbody, _ := send(ns.WPURL, http.MethodGet, s.host, s.path+"/wp-json/twin/v1"+route, "", "Cookie", cookie, "X-WP-Nonce", nonce)
			if code != want || code != pcode {
				t.Errorf("site %d with cookie and nonce GET %s: sidecar %d %s, WordPress %d %s, want %d", s.id, route, code, body, pcode, pbody, want)
				continue
			}
			sameJSON(t, fmt.Sprintf("site %d with cookie GET %s", s.id, route), body, pbody)
		}
	}

	// Changes made by PHP on one site reach the webhooks naming that site
	// (and only its changed ids, from its own row: site 3's is its own
	// configuration's).
	ns.PHP(t, `switch_to_blog(3); update_option('site3_options', array('tagline' => 'Site 3', 'columns' => 9)); `+
		`switch_to_blog(2); $v = get_option('themeopts_options'); $v['tagline'] = 'Two'; update_option('themeopts_options', $v); return true;`, nil)
	want := []string{`{"namespace":"themeopts","ids":["columns"],"site":3}`, `{"namespace":"themeopts","ids":["tagline"],"site":2}`}
	// What a failed wait saw last, and the sidecar's log.
	var last string
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("last seen: %s\nsidecar log:\n%s", last, tail(ns.SidecarLog(), 40))
		}
	})
	testwait.For(t, fmt.Sprintf("the webhooks %q", want), func() bool {
		hooks.Lock()
		defer hooks.Unlock()
		last = fmt.Sprintf("webhooks %q", hooks.bodies)
		return slices.Contains(hooks.bodies, want[0]) && slices.Contains(hooks.bodies, want[1])
	})

	// What WordPress stops is PHP's to answer: an archived site (410 for
	// all but super admins) and a host or path that finds no site (its
	// redirect, or the main site's 404).
	ns.PHP(t, `update_blog_status(3, 'archived', 1); return true;`, nil)
	defer ns.PHP(t, `update_blog_status(3, 'archived', 0); return true;`, nil)
	s3 := sites[2]
	unknown := [2]string{n.Domain, "/nosuch/wp-json/fieldmgr/v1/field-groups"}
	if mode == "subdomain" {
		unknown = [2]string{"nosuch." + n.Domain, "/wp-json/fieldmgr/v1/field-groups"}
	}
	for _, c := range [][3]string{{s3.host, s3.path + "/wp-json/fieldmgr/v1/field-groups", "site3admin"}, {unknown[0], unknown[1], "site12admin"}} {
		// The site map is read every 200 ms.
		testwait.For(t, fmt.Sprintf("%s%s answered as WordPress answers it", c[0], c[1]), func() bool {
			code, body, h := send(ns.URL, http.MethodGet, c[0], c[1], "", basic(c[2])...)
			pcode, pbody, ph := send(ns.WPURL, http.MethodGet, c[0], c[1], "", basic(c[2])...)
			last = fmt.Sprintf("sidecar %d %q %.200s, WordPress %d %q %.200s", code, h.Get("Location"), body, pcode, ph.Get("Location"), pbody)
			return code == pcode && body == pbody && h.Get("Location") == ph.Get("Location") && code != 200
		})
		t.Logf("%s%s: %s", c[0], c[1], last)
	}
}
