//go:build e2e

package e2e

import (
	"net/http"
	"strings"
	"testing"
)

// TestNoCacheHeadersAsWordPress: the no-cache headers (Cache-Control,
// Expires, Last-Modified) of the sidecar's fieldmgr/v1 and of WordPress's
// own REST server serving the same routes (twin/v1) are the same, for
// every case WordPress's serve_request tells apart: anonymous (401,
// OPTIONS), logged in by application password or by cookie and nonce
// (200, 403, OPTIONS, 404), a cookie without a nonce, a nonce that does
// not verify (with a cookie and without), a 4xx whose method came from
// X-HTTP-Method-Override, _method, an envelope. Against whichever
// WordPress the suite runs: what differs between versions is checked in
// wpjson's and themeopts' tests.
func TestNoCacheHeadersAsWordPress(t *testing.T) {
	seedGroup(t, "twin_nocache")
	admin := adminBasic()
	sub := site.Users["subscriber"]
	subClient := site.Login(t, sub)
	subNonce := site.RESTNonce(t, subClient)
	adminClient := site.Login(t, site.Users["administrator"])
	for _, c := range []struct {
		name, method, target string
		client               *http.Client
		hdr                  []string
	}{
		{"anonymous GET", "GET", "/field-groups", nil, nil},
		{"anonymous GET of a group", "GET", "/field-groups/twin_nocache", nil, nil},
		{"anonymous OPTIONS", "OPTIONS", "/field-groups", nil, nil},
		{"anonymous, X-HTTP-Method-Override", "POST", "/field-groups", nil, []string{"X-HTTP-Method-Override", "GET"}},
		{"anonymous, _method", "POST", "/field-groups?_method=GET", nil, nil},
		{"anonymous, X-HTTP-Method-Override, enveloped", "POST", "/field-groups?_envelope", nil, []string{"X-HTTP-Method-Override", "GET"}},
		{"anonymous, a nonce that does not verify", "GET", "/field-groups", nil, []string{"X-WP-Nonce", "0123456789"}},
		{"administrator GET", "GET", "/field-groups/twin_nocache", nil, admin},
		{"administrator 404", "GET", "/field-groups/twin_missing", nil, admin},
		{"administrator OPTIONS", "OPTIONS", "/field-groups", nil, admin},
		{"administrator, X-HTTP-Method-Override", "POST", "/field-groups/twin_nocache", nil, append([]string{"X-HTTP-Method-Override", "GET"}, admin...)},
		{"administrator cookie, no nonce", "GET", "/field-groups", adminClient, nil},
		{"administrator cookie, a nonce that does not verify", "GET", "/field-groups", adminClient, []string{"X-WP-Nonce", "0123456789"}},
		{"subscriber cookie and nonce", "GET", "/field-groups", subClient, []string{"X-WP-Nonce", subNonce}},
		{"subscriber cookie and nonce, OPTIONS", "OPTIONS", "/field-groups", subClient, []string{"X-WP-Nonce", subNonce}},
	} {
		var got [2]struct {
			status                         int
			cacheControl, expires, lastMod string
		}
		for i, base := range []string{site.URL + "/wp-json/fieldmgr/v1", site.WPURL + "/wp-json/twin/v1"} {
			req, _ := http.NewRequest(c.method, base+c.target, nil)
			for j := 0; j+1 < len(c.hdr); j += 2 {
				req.Header.Set(c.hdr[j], c.hdr[j+1])
			}
			resp, _ := do(t, c.client, req)
			got[i].status, got[i].cacheControl = resp.StatusCode, strings.Join(resp.Header.Values("Cache-Control"), "; ")
			got[i].expires, got[i].lastMod = resp.Header.Get("Expires"), resp.Header.Get("Last-Modified")
		}
		if got[0] != got[1] {
			t.Errorf("%s %s (%s):\n sidecar   %+v\n WordPress %+v", c.method, c.target, c.name, got[0], got[1])
		}
	}
}
