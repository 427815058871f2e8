//go:build e2e

package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/wpsidecar/wpsidecar/internal/harness/wptest"
	"github.com/wpsidecar/wpsidecar/internal/phpserial"
)

const themeoptsURL = "/wp-json/themeopts/v1"

func themeoptsRequest(t *testing.T, method, path, body string) (int, string) {
	t.Helper()
	admin := site.Users["administrator"]
	var req *http.Request
	if body != "" {
		req, _ = http.NewRequest(method, site.URL+themeoptsURL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
	} else {
		req, _ = http.NewRequest(method, site.URL+themeoptsURL+path, nil)
	}
	req.Header.Set("Authorization", wptest.BasicAuth(admin.Login, admin.ApplicationPassword))
	resp, b := do(t, nil, req)
	return resp.StatusCode, b
}

// sameJSON: equal JSON, key order included, escapes aside (PHP writes \/
// and \u00e9 where the sidecar writes / and é).
func sameJSON(t *testing.T, what, got, want string) {
	t.Helper()
	g, err1 := phpserial.FromJSON([]byte(got))
	w, err2 := phpserial.FromJSON([]byte(want))
	if err1 != nil || err2 != nil || string(phpserial.JSON(g)) != string(phpserial.JSON(w)) {
		t.Errorf("%s:\n got %s\nwant %s", what, got, want)
	}
}

// TestThemeOptions_PHPWritesSidecarReads: what PHP's update_option stored
// — every kind of value — is what the sidecar serves on the next request,
// as PHP's own wp_json_encode renders it.
func TestThemeOptions_PHPWritesSidecarReads(t *testing.T) {
	var phpJSON string
	site.PHP(t, `
		$o = new stdClass; $o->a = 1; $o->list = array();
		update_option('themeopts_options', array(
			'accent_color' => '#ff00aa',
			'sticky_header' => false,
			'tagline' => "Grüße 😀 \"quoted\" <b>&</b> a/b \\ \t",
			'body_font' => array('font-family' => 'Noto Sans', 'font-size' => '16', 'subsets' => array('latin', 'cyrillic')),
			'logo' => array('id' => 12, 'url' => 'http://x.test/logo.png', 'width' => 300, 'height' => 80, 'alt' => 'Logo', 'title' => ''),
			'slides' => array(),
			'social_links' => array(array('platform' => 'mastodon', 'url' => 'https://m.test/@a')),
			'columns' => 4,
			'floats' => array(0.1, 1.0, 1e20, -0.0, 0.30000000000000004, 1.5e-7, 123456789.125),
			10 => 'integer key',
			'010' => 'string key',
			'sparse' => array(1 => 'x', 0 => 'y'),
			'nested' => array('a' => array('b' => array('c' => array()))),
			'object' => $o,
			'null' => null,
		));
		return wp_json_encode(get_option('themeopts_options'));`, &phpJSON)
	code, body := themeoptsRequest(t, http.MethodGet, "/options", "")
	if code != 200 {
		t.Fatalf("GET /options: %d %s", code, body)
	}
	sameJSON(t, "sidecar vs PHP", body, phpJSON)

	// The sidecar saves one id; PHP sees every other id exactly as it wrote it.
	var before, after string
	site.PHP(t, `return serialize(get_option('themeopts_options'));`, &before)
	if code, body := themeoptsRequest(t, http.MethodPost, "/options", `{"columns":5}`); code != 200 {
		t.Fatalf("save: %d %s", code, body)
	}
	site.PHP(t, `wp_cache_flush(); return serialize(get_option('themeopts_options'));`, &after)
	if want := strings.Replace(before, `s:7:"columns";i:4;`, `s:7:"columns";i:5;`, 1); after != want {
		t.Errorf("PHP after the sidecar's save:\n got %s\nwant %s", after, want)
	}

	// PHP changes it again: the sidecar's next answer has it.
	site.PHP(t, `$v = get_option('themeopts_options'); $v['columns'] = 6; update_option('themeopts_options', $v); return true;`, nil)
	if _, body := themeoptsRequest(t, http.MethodGet, "/options", ""); !strings.Contains(body, `"columns":6`) {
		t.Errorf("PHP's update not seen: %s", body)
	}
}

// TestThemeOptions_SidecarWritesPHPReads: values of every field kind saved
// through the sidecar are what PHP's get_option returns, types included;
// the row the sidecar creates has the autoload this WordPress version's
// update_option gives a new row; cookie + nonce works; a subscriber is
// refused.
func TestThemeOptions_SidecarWritesPHPReads(t *testing.T) {
	site.PHP(t, `delete_option('themeopts_options'); return true;`, nil)
	save := `{"accent_color":"#abc","sticky_header":true,"layout":"boxed","tagline":"Zoë 😀 <i>\"x\"</i> \\ /",` +
		`"body_font":{"font-family":"Inter","font-weight":"700","font-size":"18","line-height":"1.4","letter-spacing":"-0.5","text-transform":"uppercase","font-style":"italic","subsets":["latin","latin-ext"]},` +
		`"logo":{"id":7,"url":"http://x.test/a.png","width":640,"height":480,"alt":"Ä","title":"T"},` +
		`"slides":[{"id":1,"url":"http://x.test/1.jpg","alt":""},{"id":2,"url":"http://x.test/2.jpg","alt":"zwei"}],` +
		`"social_links":[],"columns":12,"ratio":0.1,"footer":"<p>© 2026</p>","10":"b"}`
	code, body := themeoptsRequest(t, http.MethodPost, "/options", save)
	if code != 200 {
		t.Fatalf("save: %d %s", code, body)
	}
	sameJSON(t, "save answer", body, `{"success":true,"message":"Options saved","options":`+save+`}`)

	var php struct {
		JSON     string `json:"json"`
		Types    string `json:"types"`
		Autoload string `json:"autoload"`
		Twin     string `json:"twin"`
	}
	site.PHP(t, `wp_cache_flush(); global $wpdb; $v = get_option('themeopts_options');
		delete_option('e2e_autoload_twin'); update_option('e2e_autoload_twin', $v);
		$autoload = $wpdb->get_col("SELECT autoload FROM $wpdb->options WHERE option_name IN ('themeopts_options', 'e2e_autoload_twin') ORDER BY option_name = 'e2e_autoload_twin'");
		delete_option('e2e_autoload_twin');
		return array('json' => wp_json_encode($v),
			'types' => implode(',', array(gettype($v['sticky_header']), gettype($v['columns']), gettype($v['ratio']), gettype($v['logo']['id']), gettype(array_keys($v)[count($v) - 1]))),
			'autoload' => $autoload[0], 'twin' => $autoload[1]);`, &php)
	sameJSON(t, "PHP's get_option", php.JSON, save)
	if php.Types != "boolean,integer,double,integer,integer" || php.Autoload != php.Twin {
		t.Errorf("PHP types %q, autoload %q (PHP's update_option: %q)", php.Types, php.Autoload, php.Twin)
	}

	// Reset through the sidecar, read by PHP.
	if code, _ := themeoptsRequest(t, http.MethodPost, "/options/reset-section", `{"section":"general"}`); code != 200 {
		t.Fatalf("reset-section: %d", code)
	}
	var accent string
	site.PHP(t, `wp_cache_flush(); return get_option('themeopts_options')['accent_color'];`, &accent)
	if accent != "#3366ff" {
		t.Errorf("accent_color after reset-section: %q", accent)
	}

	admin, sub := site.Users["administrator"], site.Users["subscriber"]
	c := site.Login(t, admin)
	req, _ := http.NewRequest(http.MethodGet, site.URL+themeoptsURL+"/options", nil)
	req.Header.Set("X-WP-Nonce", site.RESTNonce(t, c))
	if resp, body := do(t, c, req); resp.StatusCode != 200 || !strings.Contains(body, `"accent_color":"#3366ff"`) {
		t.Errorf("cookie + nonce: %d %s", resp.StatusCode, body)
	}
	sc := site.Login(t, sub)
	req, _ = http.NewRequest(http.MethodGet, site.URL+themeoptsURL+"/options", nil)
	req.Header.Set("X-WP-Nonce", site.RESTNonce(t, sc))
	if resp, body := do(t, sc, req); resp.StatusCode != 403 || body != `{"code":"rest_forbidden","message":"Sorry, you are not allowed to do that.","data":{"status":403}}` {
		t.Errorf("subscriber: %d %s", resp.StatusCode, body)
	}
}

// TestThemeOptions_AutoloadAsUpdateOption: a save through the sidecar
// leaves the options row with the autoload this WordPress version's own
// update_option leaves a twin row with, from the same autoload before (or
// no row) and with the same value: small, or over the 150000 bytes above
// which 6.6 and later do not autoload a value they decide for.
func TestThemeOptions_AutoloadAsUpdateOption(t *testing.T) {
	db := site.DB(t)
	rows := []string{"themeopts_options", "e2e_autoload_twin"}
	t.Cleanup(func() {
		for _, name := range rows {
			db.Exec("DELETE FROM wp_options WHERE option_name = ?", name)
		}
		site.PHP(t, `wp_cache_flush(); return true;`, nil)
	})
	long := strings.Repeat("x", 150100)
	for _, c := range []struct {
		before string // the rows' autoload; "" no row
		footer string
	}{
		{"", "small"}, {"", long},
		{"yes", long}, {"no", "small"}, {"on", long}, {"off", "small"},
		{"auto", "small"}, {"auto", long}, {"auto-off", "small"}, {"auto-off", long}, {"auto-on", "small"}, {"auto-on", long},
	} {
		for _, name := range rows {
			if _, err := db.Exec("DELETE FROM wp_options WHERE option_name = ?", name); err != nil {
				t.Fatal(err)
			}
			if c.before != "" {
				if _, err := db.Exec("INSERT INTO wp_options (option_name, option_value, autoload) VALUES (?, ?, ?)", name, `a:1:{s:6:"footer";s:1:"x";}`, c.before); err != nil {
					t.Fatal(err)
				}
			}
		}
		site.PHP(t, `wp_cache_flush(); return true;`, nil)
		if code, body := themeoptsRequest(t, http.MethodPost, "/options", `{"footer":"`+c.footer+`"}`); code != 200 {
			t.Fatalf("save: %d %.200s", code, body)
		}
		var twin string
		site.PHP(t, `wp_cache_flush(); global $wpdb;
			$raw = $wpdb->get_var("SELECT option_value FROM $wpdb->options WHERE option_name = 'themeopts_options'");
			update_option('e2e_autoload_twin', maybe_unserialize($raw));
			return $wpdb->get_var("SELECT autoload FROM $wpdb->options WHERE option_name = 'e2e_autoload_twin'");`, &twin)
		var ours, value, twinValue string
		db.QueryRow("SELECT autoload, option_value FROM wp_options WHERE option_name = 'themeopts_options'").Scan(&ours, &value)
		db.QueryRow("SELECT option_value FROM wp_options WHERE option_name = 'e2e_autoload_twin'").Scan(&twinValue)
		if ours != twin || value != twinValue {
			t.Errorf("autoload %q before, footer of %d bytes: the sidecar left %q, update_option %q (values equal: %v)", c.before, len(c.footer), ours, twin, value == twinValue)
		}
	}
}
