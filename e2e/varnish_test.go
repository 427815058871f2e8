//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar/internal/harness/testwait"
	"github.com/wpsidecar/wpsidecar/internal/harness/wptest"
)

// viaVarnish GETs path through the Varnish in front of the sidecar.
func viaVarnish(t *testing.T, path string, hdr ...string) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, site.VarnishURL+path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, body := do(t, nil, req)
	return resp.StatusCode, body, resp.Header
}

func setOption(t *testing.T, id, value string) {
	t.Helper()
	site.PHP(t, fmt.Sprintf(`$o = get_option("themeopts_options"); if (!is_array($o)) { $o = array(); } $o[%q] = %q; update_option("themeopts_options", $o); return true;`, id, value), nil)
}

// TestVarnish_PublicRoutesCachedAndPurged: a public route through a real
// Varnish is a miss, then a hit; a change made in PHP purges it within the
// change interval and the next GET shows it; a field group edited through
// the sidecar does the same; an administrator's request to a private route
// is never cached.
func TestVarnish_PublicRoutesCachedAndPurged(t *testing.T) {
	setOption(t, "accent_color", "#111111")
	const brand = "/wp-json/e2e/v1/public/brand"
	// hit waits until brand's answer through Varnish is a hit showing
	// value: the change's purge may come after a first answer showing it
	// was kept (the sidecar read it before the feed reported the change).
	hit := func(value string) (code int, body string, h http.Header) {
		t.Helper()
		testwait.For(t, value+" through Varnish, kept", func() bool {
			code, body, h = viaVarnish(t, brand)
			return h.Get("X-Cache") == "HIT" && strings.Contains(body, `"accent_color":"`+value+`"`)
		})
		return code, body, h
	}
	if code, body, h := hit("#111111"); code != 200 || h.Get("Cache-Control") != "public, max-age=60, s-maxage=3600" {
		t.Fatalf("kept answer: %d %s %v", code, body, h)
	}
	// A change in PHP reaches the cache: purged, then kept with the new value.
	setOption(t, "accent_color", "#222222")
	if code, body, _ := hit("#222222"); code != 200 {
		t.Errorf("after the purge: %d %s", code, body)
	}

	// Field groups: a new matching group through the sidecar.
	const fields = "/wp-json/e2e/v1/public/product-fields"
	_, before, _ := viaVarnish(t, fields)
	viaVarnish(t, fields)
	admin := site.Users["administrator"]
	req, _ := http.NewRequest(http.MethodPost, site.URL+"/wp-json/fieldmgr/v1/field-groups",
		strings.NewReader(`{"group_key":"varnish_product","title":"Product","config":{"type":"post","post_type":"product"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", wptest.BasicAuth(admin.Login, admin.ApplicationPassword))
	if resp, b := do(t, nil, req); resp.StatusCode != 201 {
		t.Fatalf("create: %d %s", resp.StatusCode, b)
	}
	t.Cleanup(func() { site.DB(t).Exec("DELETE FROM wp_fieldmgr_groups WHERE group_key = 'varnish_product'") })
	testwait.For(t, "the new group through Varnish", func() bool { _, b, _ := viaVarnish(t, fields); return strings.Contains(b, `"varnish_product"`) })
	if strings.Contains(before, "varnish_product") {
		t.Errorf("the group was there before: %s", before)
	}

	// Private routes with credentials: never from the cache.
	for i := 0; i < 2; i++ {
		code, _, h := viaVarnish(t, "/wp-json/themeopts/v1/options", "Authorization", wptest.BasicAuth(admin.Login, admin.ApplicationPassword))
		if code != 200 || h.Get("X-Cache") != "MISS" {
			t.Errorf("private route, request %d: %d %s", i+1, code, h.Get("X-Cache"))
		}
	}
}

// TestVarnish_ChangeToPurge measures how long a change made in PHP takes to
// reach a client through Varnish (change interval 100 ms in this suite; the
// time includes the PHP process that makes the change, about 150 ms),
// and the hit ratio of steady reads. It reports; it asserts only that every
// change arrives.
func TestVarnish_ChangeToPurge(t *testing.T) {
	const brand = "/wp-json/e2e/v1/public/brand"
	var took, afterPHP []time.Duration
	for i := 0; i < 50; i++ {
		v := fmt.Sprintf("#%06x", 0x100000+i)
		viaVarnish(t, brand)
		start := time.Now()
		setOption(t, "accent_color", v)
		committed := time.Now()
		testwait.For(t, "the value through Varnish", func() bool { _, b, _ := viaVarnish(t, brand); return strings.Contains(b, v) })
		took, afterPHP = append(took, time.Since(start)), append(afterPHP, time.Since(committed))
	}
	slices.Sort(took)
	slices.Sort(afterPHP)
	hits := 0
	for i := 0; i < 100; i++ {
		if _, _, h := viaVarnish(t, brand); h.Get("X-Cache") == "HIT" {
			hits++
		}
	}
	t.Logf("change in PHP to new value through Varnish, %d changes: p50 %s, p99 %s (from the PHP call's return: p50 %s, p99 %s); hit ratio of 100 steady reads %d%%", len(took),
		took[len(took)/2].Round(time.Millisecond), took[len(took)*99/100].Round(time.Millisecond),
		afterPHP[len(afterPHP)/2].Round(time.Millisecond), afterPHP[len(afterPHP)*99/100].Round(time.Millisecond), hits)
}
