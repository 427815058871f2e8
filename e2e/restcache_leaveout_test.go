//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/wpsidecar/wpsidecar/internal/harness/testwait"
	"github.com/wpsidecar/wpsidecar/internal/harness/wptest"
)

// TestRESTCacheLeaveOut: the mu-plugin docs/rest-cache.md gives for
// leaving a route out (scripts/wp/restcache-leave-out.php: rctest/v1/plain
// and a user) keeps those answers out of --cache-rest, also asked for
// with ?_envelope or embedded in another route's answer, and leaves
// every other route kept.
func TestRESTCacheLeaveOut(t *testing.T) {
	fs := startFeedSiteWith(t, wptest.Options{MUPlugins: []string{"scripts/wp/restcache-test.php", "scripts/wp/restcache-leave-out.php"}},
		"", "", "--cache-rest", "wp/v2,rctest/v1")
	testwait.For(t, "readyz saying rest_cache on", func() bool {
		return strings.Contains(ask(t, fs.AdminURL, "", http.MethodGet, "/readyz", "").body, `"rest_cache":"on"`)
	})
	var post int64
	fs.PHP(t, `return wp_insert_post(array("post_title" => "rc left out", "post_status" => "publish", "post_author" => 1, "post_content" => "x"));`, &post)

	// Left out: PHP answers every time, with no-store, asked for as is,
	// enveloped, or embedded.
	for _, c := range []struct {
		target string
		// made is when PHP made the answer, "" for an answer that names
		// no time (then only the counters tell).
		made func(body string) string
	}{
		{"/wp-json/rctest/v1/plain", func(b string) string { return made(t, answer{status: 200, body: b}) }},
		{"/wp-json/rctest/v1/plain?_envelope=1", func(b string) string {
			var e struct{ Body struct{ Made string } }
			if err := json.Unmarshal([]byte(b), &e); err != nil || e.Body.Made == "" {
				t.Fatalf("enveloped answer: %s", b)
			}
			return e.Body.Made
		}},
		{"/wp-json/wp/v2/users/1", nil},
		{fmt.Sprintf("/wp-json/wp/v2/posts/%d?_embed=author", post), nil},
	} {
		kept, hits := metric(t, fs, "wpsidecar_rest_cache_kept_total"), restCount(t, fs, "hit")
		var times []string
		for range 2 {
			a := raw(t, http.MethodGet, fs.URL+c.target)
			if a.status != 200 || !slices.Contains(a.header, "Cache-Control: no-store") {
				t.Errorf("%s: %d, header %q: want 200 with Cache-Control: no-store", c.target, a.status, a.header)
			}
			if c.made != nil {
				times = append(times, c.made(a.body))
			}
		}
		if metric(t, fs, "wpsidecar_rest_cache_kept_total") != kept || restCount(t, fs, "hit") != hits {
			t.Errorf("%s: kept or given from memory (kept %d → %d, hits %d → %d)", c.target,
				kept, metric(t, fs, "wpsidecar_rest_cache_kept_total"), hits, restCount(t, fs, "hit"))
		}
		if len(times) == 2 && times[0] == times[1] {
			t.Errorf("%s: PHP's answer given twice (%s)", c.target, times[0])
		}
	}

	// Not left out: the same post without its author embedded, and the
	// categories, are kept.
	for _, target := range []string{fmt.Sprintf("/wp-json/wp/v2/posts/%d", post), "/wp-json/wp/v2/categories"} {
		testwait.For(t, target+" given from memory", func() bool {
			hits := restCount(t, fs, "hit")
			if a := raw(t, http.MethodGet, fs.URL+target); slices.Contains(a.header, "Cache-Control: no-store") {
				t.Fatalf("%s: no-store on a route not left out", target)
			}
			return restCount(t, fs, "hit") > hits
		})
	}
}
