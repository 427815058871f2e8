//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar/internal/harness/testwait"
	"github.com/wpsidecar/wpsidecar/internal/harness/wptest"
)

// cachedKeys are those of keys the site's Redis holds.
func cachedKeys(t *testing.T, keys ...string) []string {
	t.Helper()
	c := site.RedisClient()
	defer c.Close()
	var out []string
	for _, k := range keys {
		n, err := c.Exists(context.Background(), k).Result()
		if err != nil {
			t.Fatalf("redis: %v", err)
		}
		if n == 1 {
			out = append(out, k)
		}
	}
	return out
}

// TestObjectCache_Found: the sidecar found the site's Redis object cache
// by itself, from wp-config.php and wp-content, and names keys as PHP does.
func TestObjectCache_Found(t *testing.T) {
	want := fmt.Sprintf(`"example_key":"%swp:options:alloptions","why":"auto: %s/wp-content/object-cache.php"`, site.RedisPrefix, site.Docroot)
	// The log is written out a moment after it is made.
	testwait.For(t, "the object cache found and logged", func() bool {
		log := site.SidecarLog()
		return strings.Contains(log, want) && strings.Contains(log, "Redis object cache: stale keys deleted after each write")
	})
	// PHP reads options through the cache: the keys the sidecar deletes
	// are really the ones PHP fills.
	site.PHP(t, `get_option('blogname'); get_option('wpsidecar_never_set'); return true;`, nil)
	keys := []string{site.RedisPrefix + "wp:options:alloptions", site.RedisPrefix + "wp:options:notoptions"}
	if got := cachedKeys(t, keys...); !slices.Equal(got, keys) {
		t.Errorf("PHP cached %v, want %v", got, keys)
	}
}

// TestObjectCache_ThemeOptionWrites: after each kind of theme-options
// write through the sidecar, PHP's next get_option — no flush — returns
// the new value, and the keys it would have read stale are gone.
func TestObjectCache_ThemeOptionWrites(t *testing.T) {
	const name = "themeopts_options"
	keys := []string{site.RedisPrefix + "wp:options:alloptions", site.RedisPrefix + "wp:options:notoptions", site.RedisPrefix + "wp:options:" + name}
	site.PHP(t, `delete_option('themeopts_options'); return true;`, nil)

	phpSees := func(field string) string {
		var v string
		site.PHP(t, fmt.Sprintf(`$o = get_option('themeopts_options'); return is_array($o) && isset($o[%q]) ? wp_json_encode($o[%q]) : 'missing';`, field, field), &v)
		return v
	}
	writes := []struct {
		name, method, path, body string
		field, want              string
	}{
		{"create", http.MethodPost, "/options", `{"accent_color":"#111111"}`, "accent_color", `"#111111"`},
		{"save", http.MethodPost, "/options", `{"accent_color":"#222222"}`, "accent_color", `"#222222"`},
		{"reset section", http.MethodPost, "/options/reset-section", `{"section":"general"}`, "accent_color", `"#3366ff"`},
		{"save again", http.MethodPost, "/options", `{"columns":7}`, "columns", `7`},
		{"reset", http.MethodPost, "/options/reset", ``, "columns", `3`},
	}
	for _, w := range writes {
		// PHP has read the option (cached now, or cached as missing). The
		// sidecar deletes the keys a second time a moment after each write,
		// so PHP may need to read again before they stay.
		var before string
		testwait.For(t, "the keys cached", func() bool { before = phpSees(w.field); return len(cachedKeys(t, keys[:2]...)) > 0 })
		code, body := themeoptsRequest(t, w.method, w.path, w.body)
		if code != 200 {
			t.Fatalf("%s: %d %s", w.name, code, body)
		}
		if got := cachedKeys(t, keys...); got != nil {
			t.Errorf("%s: still cached after the write: %v", w.name, got)
		}
		if got := phpSees(w.field); got != w.want {
			t.Errorf("%s: PHP's get_option has %s = %s (before the write %s), want %s", w.name, w.field, got, before, w.want)
		}
	}
	resp, err := http.Get(site.AdminURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !regexp.MustCompile(`(?m)^wpsidecar_object_cache_deletions_total\{result="ok"\} [1-9]`).Match(b) ||
		!strings.Contains(string(b), `wpsidecar_object_cache_deletions_total{result="failed"} 0`) {
		t.Errorf("metrics:\n%s", regexp.MustCompile(`(?m)^wpsidecar_object_cache.*$`).FindAll(b, -1))
	}
}

// TestObjectCache_ApplicationPasswordUse: recording an application
// password's use (a usermeta write) deletes the user's cached meta, so
// wp-admin's Application Passwords list shows the new "last used".
func TestObjectCache_ApplicationPasswordUse(t *testing.T) {
	u := site.Users["editor"]
	key := fmt.Sprintf("%swp:user_meta:%d", site.RedisPrefix, u.ID)
	// Last used two days ago, written through WordPress (which updates its
	// cache), then read so that the user's meta is cached.
	var old int64
	site.PHP(t, fmt.Sprintf(`$items = WP_Application_Passwords::get_user_application_passwords(%d);
		foreach ($items as &$i) { $i['last_used'] = time() - 2 * DAY_IN_SECONDS; }
		update_user_meta(%d, '_application_passwords', $items);
		get_user_meta(%d);
		return $items[0]['last_used'];`, u.ID, u.ID, u.ID), &old)
	if cachedKeys(t, key) == nil {
		t.Fatalf("PHP did not cache %s", key)
	}
	req, _ := http.NewRequest(http.MethodGet, site.URL+"/wp-json/fieldmgr/v1/field-schemas", nil)
	req.Header.Set("Authorization", wptest.BasicAuth(u.Login, u.ApplicationPassword))
	start := time.Now().Unix()
	if resp, body := do(t, nil, req); resp.StatusCode != 403 || !strings.Contains(body, "rest_forbidden") {
		// An editor lacks manage_options; the password was still used.
		t.Fatalf("editor: %d %s", resp.StatusCode, body)
	}
	// The use is recorded after the answer, off the request's path.
	testwait.For(t, "the key deleted after the use is recorded", func() bool { return cachedKeys(t, key) == nil })
	var lastUsed int64
	site.PHP(t, fmt.Sprintf(`$i = WP_Application_Passwords::get_user_application_passwords(%d); return $i[0]['last_used'];`, u.ID), &lastUsed)
	if lastUsed < start {
		t.Errorf("PHP sees last_used %d (was %d), want at least %d", lastUsed, old, start)
	}
}
