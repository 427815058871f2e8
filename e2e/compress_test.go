//go:build e2e

package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/wpsidecar/wpsidecar/internal/harness/testcoding"
	"github.com/wpsidecar/wpsidecar/internal/harness/testwait"
	"github.com/wpsidecar/wpsidecar/internal/harness/wptest"
)

// rawClient keeps bodies as they come: no Accept-Encoding of its own, no
// transparent gunzip.
var rawClient = &http.Client{Transport: &http.Transport{DisableCompression: true}, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// rawGet GETs url with Accept-Encoding accept ("": none).
func rawGet(t *testing.T, url, accept string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if accept != "" {
		req.Header.Set("Accept-Encoding", accept)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, body := do(t, rawClient, req)
	return resp, []byte(body)
}

// TestCompress_PublicRoutesThroughVarnish: a public route large enough to
// be coded answers br or gzip from the sidecar, each with its own tag and
// Vary: Accept-Encoding; through the real Varnish each kind of client gets
// its answer from the cache (a hit the second time) and the same JSON.
func TestCompress_PublicRoutesThroughVarnish(t *testing.T) {
	const fields = "/wp-json/e2e/v1/public/product-fields"
	admin := site.Users["administrator"]
	for i := range 6 {
		req, _ := http.NewRequest(http.MethodPost, site.URL+"/wp-json/fieldmgr/v1/field-groups", strings.NewReader(fmt.Sprintf(
			`{"group_key":"compress_product_%d","title":"Product details %d %s","config":{"type":"post","post_type":"product"}}`, i, i, strings.Repeat("long title ", 20))))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", wptest.BasicAuth(admin.Login, admin.ApplicationPassword))
		if resp, b := do(t, nil, req); resp.StatusCode != 201 {
			t.Fatalf("create %d: %d %s", i, resp.StatusCode, b)
		}
	}
	t.Cleanup(func() {
		site.DB(t).Exec("DELETE FROM wp_fieldmgr_groups WHERE group_key LIKE 'compress\\_product\\_%'")
	})

	// From the sidecar itself.
	var identity []byte
	var tag string
	testwait.For(t, "the sidecar's own answer", func() bool {
		resp, b := rawGet(t, site.URL+fields, "")
		identity, tag = b, resp.Header.Get("ETag")
		return resp.StatusCode == 200 && bytes.Contains(b, []byte(`"compress_product_5"`))
	})
	if len(identity) < 1024 {
		t.Fatalf("the route's answer is %d bytes, too small to be coded", len(identity))
	}
	for _, accept := range []string{"br, gzip", "gzip"} {
		resp, b := rawGet(t, site.URL+fields, accept)
		coding := strings.SplitN(accept, ",", 2)[0]
		if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != coding || resp.Header.Get("ETag") != strings.TrimSuffix(tag, `"`)+"-"+coding+`"` ||
			!strings.Contains(resp.Header.Get("Vary"), "Accept-Encoding") || resp.ContentLength != int64(len(b)) || !bytes.Equal(testcoding.Decode(t, coding, b), identity) {
			t.Errorf("sidecar, %q: %d %v", accept, resp.StatusCode, resp.Header)
		}
		// Revalidation across codings.
		if resp, b := rawGet(t, site.URL+fields, accept, "If-None-Match", tag); resp.StatusCode != 304 || len(b) != 0 || resp.Header.Get("ETag") != strings.TrimSuffix(tag, `"`)+"-"+coding+`"` {
			t.Errorf("sidecar, %q, holding the identity tag: %d %v", accept, resp.StatusCode, resp.Header)
		}
	}

	// Through Varnish: it asks the sidecar for gzip, keeps that, and
	// gives it to clients that take gzip and unzipped to the others.
	for _, tc := range []struct{ accept, coding string }{{"gzip", "gzip"}, {"br, gzip", "gzip"}, {"", ""}, {"br", ""}} {
		// Waited for as a hit: a purge of the groups' creation may still
		// come after the answer that shows them was kept.
		var resp *http.Response
		testwait.For(t, "Varnish's coded answer, kept", func() bool {
			var b []byte
			resp, b = rawGet(t, site.VarnishURL+fields, tc.accept)
			return resp.StatusCode == 200 && resp.Header.Get("X-Cache") == "HIT" && resp.Header.Get("Content-Encoding") == tc.coding && bytes.Equal(testcoding.Decode(t, tc.coding, b), identity)
		})
		if !strings.Contains(resp.Header.Get("Vary"), "Accept-Encoding") {
			t.Errorf("Varnish, %q: %d %v", tc.accept, resp.StatusCode, resp.Header)
		}
	}
}

// TestCompress_WordPressUntouched: WordPress's own answers through the
// sidecar are the bytes WordPress sends, coded or not as it codes them,
// whatever the client accepts.
func TestCompress_WordPressUntouched(t *testing.T) {
	for _, path := range []string{"/wp-json/wp/v2/types", "/wp-json/wp/v2/types/post"} {
		for _, accept := range []string{"br, gzip", "gzip", ""} {
			wp, wpBody := rawGet(t, site.WPURL+path, accept)
			via, viaBody := rawGet(t, site.URL+path, accept)
			if wp.StatusCode != 200 || via.StatusCode != wp.StatusCode || !bytes.Equal(viaBody, wpBody) ||
				via.Header.Get("Content-Encoding") != wp.Header.Get("Content-Encoding") || via.Header.Get("Vary") != wp.Header.Get("Vary") ||
				via.Header.Get("Content-Length") != wp.Header.Get("Content-Length") {
				t.Errorf("%s, %q: WordPress %d %v (%d bytes), through the sidecar %d %v (%d bytes)", path, accept,
					wp.StatusCode, wp.Header, len(wpBody), via.StatusCode, via.Header, len(viaBody))
			}
		}
	}
}
